"""Pretraining batches straight from text files: tokenized, paired and masked in tf.data.

No offline step: each epoch sees new NSP pairs and new masks. Input is the
create_pretraining_data format (one sentence per line, blank lines between
documents; `.gz` ok). Per input pipeline and epoch:
1. Files are read in a shuffled order (up to 8 at once); lines are grouped
   into documents (a blank line or a new file starts one; a document is cut
   after `max_document_sentences`, as `document_reader.read_documents` does).
   Lines that are not UTF-8 or hold NUL bytes are skipped (the up-front census
   warns with file:line). Documents are sharded across pipelines by key.
2. Documents are tokenized and shuffled at the document level. The shuffle
   buffer, the "window", holds the pipeline's whole corpus when its text fits
   in `max_window_bytes` (1 GiB): every epoch is then one window, a uniform
   permutation of all documents, and the file order does not matter. A larger
   corpus is cut into windows of that many bytes' worth of documents: each
   window is drawn by a shuffle buffer of that size from the (per-epoch
   shuffled, interleaved) file stream, so the order is random within about one
   window of the stream.
3. Within a window, consecutive sentences of a document are packed into
   chunks of about `seq_length - 3` WordPieces (a random shorter target with
   probability `short_seq_prob`, per chunk). With probability 0.5 (or if the
   chunk has one sentence) B comes from another document drawn uniformly from
   the whole window, from a random sentence on, as long as the rest of the
   chunk ("NotNext", label 1; google-research draws from the whole corpus, so
   equal when the corpus fits in one window); else A and B split the chunk at
   a random sentence ("IsNext", label 0). Unlike google-research, the chunk
   sentences not used by a NotNext pair are dropped, not put back. A window's
   chunks and pairs are found in one graph function (a loop over chunks on the
   sentence lengths, then one gather of all pieces), not sentence by sentence.
4. Examples pass a 1,000-example shuffle (chunks of one document apart), are
   truncated as google-research's `truncate_seq_pair` (trim amounts split at
   random between the front and back), packed `[CLS] A [SEP] B [SEP]`,
   batched, and masked with `masking.mask_batch` (80/10/10, optional
   whole-word masking).
With `use_next_sentence=False` a chunk of `seq_length - 2` pieces becomes
`[CLS] A [SEP]` with label 0 (MLM only).

The batch structure equals `pretraining_dataset`'s model-input dict.
"""

import functools

import tensorflow as tf

from bert_tf.data import document_reader
from bert_tf.data.autotune import without_autotune
from bert_tf.data.pipelines import masking
from bert_tf.data.pipelines.pretraining_dataset import input_pipeline
from bert_tf.tokenization.bert_preprocessor import truncate_seq_pair_lengths
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

MAX_WINDOW_BYTES = 1 << 30
_EXAMPLE_SHUFFLE = 1000
_TRAIN_PREFETCH = 32
_CYCLE_LENGTH = 8
# Python's str.strip() whitespace (so blank lines match document_reader's), for RE2.
_SPACE = r"[\t-\r\x{1c}-\x{20}\x{85}\p{Z}]"


@functools.lru_cache(maxsize=64)
def _census(files, unused_versions, max_document_sentences, num_pipelines):
    """(documents, text bytes) per input pipeline, reading `files` once with `document_reader`.

    Warns about lines that are not UTF-8 (naming file:line). Cached per file version.
    """
    documents, sizes = [0] * num_pipelines, [0] * num_pipelines
    index_in_file, last_file, file_index = 0, None, {path: i for i, path in enumerate(files)}
    for document in document_reader.read_documents(list(files), max_document_sentences):
        index_in_file = index_in_file + 1 if document.file == last_file else 0
        last_file = document.file
        pipeline = (file_index[document.file] * 2**32 + index_in_file) % num_pipelines
        documents[pipeline] += 1
        sizes[pipeline] += sum(len(s) + 1 for s in document.sentences)
    return documents, sizes


def _window_size(files, max_document_sentences, num_pipelines, pipeline_id, use_next_sentence,
                 max_window_bytes):
    """(documents per window, whether one window holds all of them) for this pipeline;
    checks that it has enough documents.

    Raises:
      document_reader.InputError: no documents at all (e.g. only blank lines), or too few
        for this pipeline.
    """
    versions = tuple((tf.io.gfile.stat(f).length, tf.io.gfile.stat(f).mtime_nsec) for f in files)
    documents, sizes = _census(tuple(files), versions, max_document_sentences, num_pipelines)
    if not sum(documents):
        raise document_reader.InputError(f"{', '.join(files)}: no documents (every line is blank "
                                         "or unreadable); pretraining text has one sentence per "
                                         "line and blank lines between documents")
    needed = 2 if use_next_sentence else 1
    if documents[pipeline_id] < needed:
        raise document_reader.InputError(f"input pipeline {pipeline_id} of {num_pipelines} gets "
                                         f"{documents[pipeline_id]} of the {sum(documents)} "
                                         f"documents in {', '.join(files)}; it needs {needed} "
                                         "(NotNext B comes from another document): add documents "
                                         "or use fewer input pipelines")
    count, size = documents[pipeline_id], sizes[pipeline_id]
    if size <= max_window_bytes:
        return count, True
    return max(needed, count * max_window_bytes // size), False


def _file_documents(file_index, path, compression, max_document_sentences):
    """(key int64, sentences [k] string) per document of one file, in file order.

    The key is `file_index * 2**32 + document_index_in_file`: the same in every epoch.
    """
    lines = tf.data.TextLineDataset(path, compression_type=compression)
    lines = lines.filter(
        lambda line: (
            tf.equal(tf.strings.unicode_transcode(line, "UTF-8", "UTF-8", errors="replace"), line)
            & ~tf.strings.regex_full_match(line, "(?s).*\x00.*")
        )
    )
    lines = lines.map(lambda line: tf.strings.regex_replace(line, f"^{_SPACE}+|{_SPACE}+$", ""))
    # Closes the last document.
    lines = lines.concatenate(tf.data.Dataset.from_tensors(tf.constant("")))

    def step(state, line):
        index, sentences = state
        nonblank = tf.strings.length(line) > 0
        grown = tf.concat([sentences, tf.boolean_mask(tf.reshape(line, [1]),
                                                      tf.reshape(nonblank, [1]))], 0)
        ready = (tf.size(grown) > 0) & (~nonblank | (tf.size(grown) >= max_document_sentences))
        kept = tf.cond(ready, lambda: tf.zeros([0], tf.string), lambda: grown)
        return (index + tf.cast(ready, tf.int64), kept), (ready, file_index * 2**32 + index, grown)

    documents = lines.scan((tf.constant(0, tf.int64), tf.zeros([0], tf.string)), step)
    return documents.filter(_ready).map(_without_flag)


def _ready(ready, *unused_values):
    return ready


def _without_flag(unused_ready, *values):
    return values


def _documents(files, is_training, seed, max_document_sentences):
    """(key, sentences) of every document of `files`; training: files in a new order each epoch."""
    compression = "GZIP" if files[0].endswith(".gz") else ""
    if any(f.endswith(".gz") != bool(compression) for f in files):
        raise document_reader.InputError(f"mix of .gz and plain text files: {files}")
    dataset = tf.data.Dataset.from_tensor_slices((tf.range(len(files), dtype=tf.int64), files))
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed)
    return dataset.interleave(
        lambda index, path: _file_documents(index, path, compression, max_document_sentences),
        cycle_length=min(_CYCLE_LENGTH, len(files)) if is_training else 1,
        num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def _tokenized(documents, tokenizer, batch_size=64):
    """(key, tokens [sentences, (words), (pieces)]) per document; sentences without pieces go."""
    def tokenize(keys, lines):  # lines: [D, (sentences)]
        sentences = tokenizer.tokenize(lines.flat_values)  # [N, (words), (pieces)]
        keep = sentences.merge_dims(1, 2).row_lengths() > 0
        tokens = tf.RaggedTensor.from_value_rowids(
            tf.ragged.boolean_mask(sentences, keep), tf.boolean_mask(lines.value_rowids(), keep),
            nrows=lines.nrows())
        return keys, tokens

    batches = documents.ragged_batch(batch_size).map(tokenize, num_parallel_calls=tf.data.AUTOTUNE,
                                                      deterministic=True)
    return batches.unbatch().filter(lambda key, tokens: tokens.nrows() > 0)


def _target_length(chunk_seed, max_num_tokens, short_seq_prob):
    """A chunk's target length: `max_num_tokens`, or with `short_seq_prob` a random one in [2,
    max]."""
    draws = tf.random.stateless_uniform([2], seed=chunk_seed)
    short = 2 + tf.cast(draws[1] * tf.cast(max_num_tokens - 1, tf.float32), tf.int64)
    return tf.where(draws[0] < short_seq_prob, short, tf.cast(max_num_tokens, tf.int64))


def _first_reaching(offsets, value):
    """The first index i with offsets[i] >= value (offsets ascending)."""
    return tf.searchsorted(offsets, tf.reshape(value, [1]), out_type=tf.int64)[0]


def _pair(chunk_seed, start, end, target, offsets, doc_starts, doc, max_num_tokens):
    """Piece ranges and label of one chunk's NSP pair: (a start, a length, b start, b length, label,
    valid).

    A is the chunk's first sentences up to a random one; with probability 0.5 (or if the chunk has
    one sentence) B comes from a uniform other document of the window, from a uniform sentence on,
    whole sentences until `target` pieces in all (NotNext, label 1); else B is the chunk's rest.
    Both are cut as `truncate_seq_pair` does, the cut split at random between front and back.
    """
    seeds = tf.random.experimental.stateless_split(chunk_seed, num=4)
    draws = tf.random.stateless_uniform([4], seed=seeds[0])
    num_docs = tf.size(doc_starts, out_type=tf.int64) - 1
    num_sentences = end - start
    a_end = start + tf.where(num_sentences >= 2, 1
                             + tf.cast(draws[0] * tf.cast(num_sentences - 1, tf.float32), tf.int64),
                             1)
    random_next = ((num_sentences == 1) | (draws[1] < 0.5)) & (num_docs > 1)
    a_start, length_a = offsets[start], offsets[a_end] - offsets[start]
    # NotNext: whole sentences of the other document while the pieces before each stay short of the
    #     target.
    other = (doc + 1 + tf.cast(draws[2] * tf.cast(num_docs - 1, tf.float32), tf.int64)) % num_docs
    other_start, other_end = doc_starts[other], doc_starts[other + 1]
    b_first = other_start + tf.cast(draws[3] * tf.cast(other_end - other_start, tf.float32),
                                    tf.int64)
    needed = 1 + tf.clip_by_value(
        _first_reaching(offsets, offsets[b_first] + target - length_a) - b_first - 1,
        0,
        other_end - b_first,
    )
    b_end = tf.where(random_next, tf.minimum(b_first + needed, other_end), end)
    b_start = offsets[tf.where(random_next, b_first, a_end)]
    length_b = offsets[b_end] - b_start
    new_a, new_b = truncate_seq_pair_lengths(length_a, length_b, max_num_tokens)
    front_a = _trim_front(length_a - new_a, seeds[1])
    front_b = _trim_front(length_b - new_b, seeds[2])
    return (a_start + front_a, new_a, b_start + front_b, new_b, tf.cast(random_next, tf.int64),
            (num_sentences >= 2) | (num_docs > 1))  # One sentence and no other document: no pair.


def _trim_front(excess, seed):
    """Of `excess` pieces to remove, how many go from the front: Binomial(excess, 1/2)."""
    return tf.random.stateless_binomial([], seed=seed, counts=tf.cast(excess, tf.float32),
                                        probs=0.5, output_dtype=tf.int64)


def _example_ranges(tokens, seed, max_num_tokens, short_seq_prob, use_next_sentence):
    """Per example of a window, piece ranges into `tokens.flat_values`: a_start, a_length, b_start,
    b_length (0 without NSP), label; int64 `[E]`.

    Consecutive sentences of a document are packed into chunks: a chunk closes at its document's
    end or once its pieces reach its target length; a chunk that starts a document after one closed
    at a document's end takes at least two sentences (the order the old per-sentence scan closed
    them in, kept so that batches stay as they were). A `tf.while_loop` over chunks, each found by
    a binary search in the sentence offsets, with every chunk's random draws keyed by its index:
    a tf.data element per sentence cost ~1 ms of CPU per example.
    """
    sentences = tokens.merge_dims(0, 1)  # [S, (words), (pieces)]
    lengths = tf.cast(sentences.merge_dims(1, 2).row_lengths(), tf.int64)
    offsets = tf.concat([tf.zeros([1], tf.int64), tf.cumsum(lengths)], 0)  # [S + 1]
    doc_of = tf.cast(tokens.value_rowids(), tf.int64)
    doc_starts = tf.cast(tokens.row_splits, tf.int64)
    num_sentences = tf.size(lengths, out_type=tf.int64)
    # A chunk's seed is `stateless_fold_in(seed, index)`, i.e. [draw keyed by seed, index]: the
    # draw is the same for every chunk, so it is made once here, not in each of ~13k iterations.
    folded = tf.random.stateless_uniform([], seed=seed, dtype=tf.int64, minval=None, maxval=None)

    def body(index, start, checked, chunks):
        chunk_seed = tf.stack([folded, index])
        target = _target_length(chunk_seed, max_num_tokens, short_seq_prob)
        doc_end = doc_starts[doc_of[start] + 1]
        reached = tf.maximum(_first_reaching(offsets, offsets[start] + target),
                             start + 2 - tf.cast(checked, tf.int64))
        end = tf.minimum(reached, doc_end)
        if use_next_sentence:
            values = _pair(chunk_seed, start, end, target, offsets, doc_starts, doc_of[start],
                           max_num_tokens)
        else:
            values = (offsets[start], tf.minimum(offsets[end] - offsets[start], max_num_tokens),
                      tf.constant(True))
        row = tf.stack([tf.cast(value, tf.int64) for value in values])
        return index + 1, end, reached <= doc_end, chunks.write(tf.cast(index, tf.int32), row)

    chunks = tf.TensorArray(tf.int64, size=0, dynamic_size=True,
                            element_shape=[6 if use_next_sentence else 3])
    _, _, _, chunks = tf.while_loop(lambda index, start, *unused: start < num_sentences, body,
                                    (tf.constant(0, tf.int64), tf.constant(0, tf.int64),
                                     tf.constant(True), chunks))
    chunks = chunks.stack()
    chunks = tf.boolean_mask(chunks[:, :-1], chunks[:, -1] > 0)  # Drop chunks that make no example.
    values = tf.unstack(chunks, axis=1)
    if not use_next_sentence:
        zeros = tf.zeros_like(values[0])
        values = [values[0], values[1], zeros, zeros, zeros]
    return values


def _window_examples(window_index, tokens, seed, max_num_tokens, short_seq_prob, use_next_sentence,
                     tokenizer, shuffle):
    """The unmasked examples of one window of documents (`tokens` [W, (sentences), (words),
    (pieces)]).

    Built for the whole window at once: the piece ranges of every example, then one gather.
    """
    window_seed = tf.random.experimental.stateless_fold_in(tf.stack([tf.constant(seed, tf.int64),
                                                                     0]), window_index)
    a_start, a_length, b_start, b_length, labels = _example_ranges(
        tokens, window_seed, max_num_tokens, short_seq_prob, use_next_sentence)
    pieces = tokens.flat_values
    word_ids = tokens.merge_dims(0, 2).value_rowids()  # Unique per word of the window.
    word_starts = tf.concat([tf.ones([1], tf.bool), word_ids[1:] != word_ids[:-1]], 0)
    # Segments [CLS] A [SEP] B [SEP] (MLM only: B and its [SEP] empty), as ranges into
    # pieces + [CLS, SEP]; the first piece of each segment starts a word.
    cls, sep = tf.size(pieces, out_type=tf.int64), tf.size(pieces, out_type=tf.int64) + 1
    ones = tf.ones_like(a_start)
    last_sep = ones if use_next_sentence else 0 * ones
    starts = tf.reshape(tf.stack([cls * ones, a_start, sep * ones, b_start, sep * ones], 1), [-1])
    lengths = tf.reshape(tf.stack([ones, a_length, ones, b_length, last_sep], 1), [-1])
    position = tf.ragged.range(lengths)  # [5E, (pieces)]
    index = (position + tf.expand_dims(starts, 1)).flat_values
    segment_types = tf.tile(tf.constant([0, 0, 0, 1, 1], tf.int32),
                            tf.shape(a_start, out_type=tf.int64))
    row_lengths = tf.reduce_sum(tf.reshape(lengths, [-1, 5]), 1)
    width = max_num_tokens + (3 if use_next_sentence else 2)

    def rows(values):
        # Dense rows with their lengths (`_masked` makes them ragged again): slicing, shuffling
        # and batching ragged examples in tf.data cost ~80 µs of CPU an example, half the
        # demo pipeline's work besides the chunk loop; dense ones a fraction of that.
        return tf.RaggedTensor.from_row_lengths(values, row_lengths).to_tensor(shape=[None, width])

    examples = {
        "input_ids": rows(
            tf.gather(tf.concat([pieces, [tokenizer.cls_id, tokenizer.sep_id]], 0), index)
        ),
        "input_type_ids": rows(tf.repeat(segment_types, lengths)),
        "word_starts": rows(
            tf.gather(tf.concat([word_starts, [True, True]], 0), index)
            | (position.flat_values == 0)
        ),
        "length": row_lengths,
        "next_sentence_labels": tf.cast(labels, tf.int32),
    }
    examples = tf.data.Dataset.from_tensor_slices(examples)
    return examples.shuffle(_EXAMPLE_SHUFFLE, seed=seed) if shuffle else examples


def _masked(batches, seed, seq_length, max_predictions_per_seq, masked_lm_prob, whole_word_mask,
            tokenizer, static_batch):
    """Masks (index, batch of dense rows and their lengths) pairs into the model-input dict."""
    special_ids = [tokenizer.cls_id, tokenizer.sep_id]

    def finish(index, dense):
        batch = {key: tf.RaggedTensor.from_tensor(dense[key], lengths=dense["length"])
                 for key in ("input_ids", "input_type_ids", "word_starts")}
        masked, positions, labels = masking.mask_batch(
            batch["input_ids"],
            batch["word_starts"],
            tf.stack([tf.constant(seed, tf.int64), index]),
            tokenizer.vocab_size,
            tokenizer.mask_id,
            special_ids,
            masked_lm_prob,
            max_predictions_per_seq,
            whole_word_mask,
        )
        sequence_shape, predictions_shape = [static_batch, seq_length], [static_batch,
                                                                         max_predictions_per_seq]
        return {
            "input_word_ids": masked.to_tensor(shape=sequence_shape),
            "input_mask": tf.ones_like(masked).to_tensor(shape=sequence_shape),
            "input_type_ids": batch["input_type_ids"].to_tensor(shape=sequence_shape),
            "masked_lm_positions": positions.to_tensor(shape=predictions_shape),
            "masked_lm_ids": tf.cast(labels, tf.int32).to_tensor(shape=predictions_shape),
            "masked_lm_weights": tf.ones_like(labels, tf.float32).to_tensor(
                shape=predictions_shape
            ),
            "next_sentence_labels": dense["next_sentence_labels"],
        }

    return batches.map(finish, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


# Its tf.data functions are graph code already (explicit tf.while_loop and tf.cond): AutoGraph
# converting them took ~2 s of the ~6 s that building the demo's two pipelines took, for
# identical batches. Functions traced while this one runs are left unconverted.
@tf.autograph.experimental.do_not_convert
def dynamic_pretraining_dataset(text_patterns, vocab_file, lower_case, batch_size, seq_length,
                                max_predictions_per_seq, masked_lm_prob=0.15, whole_word_mask=False,
                                use_next_sentence=True, short_seq_prob=0.1, is_training=True,
                                input_context=None, seed=0, skip_batches=0,
                                max_window_bytes=MAX_WINDOW_BYTES, max_document_sentences=10000):
    """Batches of pretraining examples built in-graph from text files.

    Training yields epoch after epoch, each holding every document of the pipeline
    once, shuffled at the document level (the module docstring says how). The order
    is a deterministic function of files, `seed` and the input pipeline, so a
    resumed run continues with `skip_batches` = batches this pipeline produced.
    The files are read once up front to count documents and size the window.

    Args:
      text_patterns: comma-separated globs (str) or list of globs; one sentence
        per line, blank lines between documents, all `.gz` or all plain.
      vocab_file, lower_case: the tokenizer (the package's `BertTokenizer`).
      batch_size: global batch size; each pipeline yields the per-replica share.
      seq_length, max_predictions_per_seq: S and P of the padded outputs.
      masked_lm_prob, whole_word_mask: what to mask (capped at P pieces).
      use_next_sentence: False: single-segment MLM-only examples, labels 0.
      short_seq_prob: probability of a chunk with a random shorter target.
      is_training: shuffle, repeat forever and drop partial batches; else one
        pass in file order (one window), keeping the last partial batch.
      input_context: optional `tf.distribute.InputContext`; documents are
        sharded per input pipeline.
      seed, skip_batches: the order's seed; batches to skip (resuming).
      max_window_bytes: the most text shuffled together and drawn from for B.
      max_document_sentences: longer documents are cut (as `read_documents`).

    Returns:
      A `tf.data.Dataset` of `pretraining_dataset`'s model-input dicts.

    Raises:
      document_reader.InputError: a pattern matches no file, a file is
        unreadable, or there are too few documents (e.g. only blank lines).

    Example:
    >>> ds = dynamic_pretraining_dataset(  # doctest: +SKIP
    ...     "bert_tf/data/corpus/train.txt.gz", "bert_tf/data/corpus/vocab.txt", lower_case=True,
    ...     batch_size=32, seq_length=128, max_predictions_per_seq=20)
    """
    files = document_reader.expand_input_patterns(text_patterns)
    num_pipelines, pipeline_id, batch_size = input_pipeline(input_context, batch_size)
    window, one_window = _window_size(files, max_document_sentences, num_pipelines, pipeline_id,
                                      use_next_sentence, max_window_bytes)
    tokenizer = BertTokenizer(vocab_file, lower_case=lower_case)
    seed = (seed or 0) * 1000 + pipeline_id  # Independent streams per pipeline; None acts as 0.
    documents = _documents(files, is_training, seed, max_document_sentences)
    documents = _tokenized(documents.filter(lambda key, unused: key % num_pipelines == pipeline_id),
                           tokenizer)
    if is_training and one_window:
        # Each epoch re-read and re-tokenized the whole corpus: on the demo's 2 cores that
        # starved the train step for ~40 s of every ~200-step epoch. The window's shuffle
        # buffer holds every tokenized document anyway, so keeping them costs at most as
        # much memory again; masking and NSP pairs are still drawn anew each epoch.
        documents = documents.cache()
    examples = _examples(documents, window, is_training, seed, seq_length, short_seq_prob,
                         use_next_sentence, tokenizer)
    batches = examples.batch(batch_size, drop_remainder=is_training).enumerate()
    if skip_batches:
        batches = batches.skip(skip_batches)
    batches = _masked(batches, seed, seq_length, max_predictions_per_seq, masked_lm_prob,
                      whole_word_mask, tokenizer, batch_size if is_training else None)
    # The autotuning model thread also took ~20% of this pipeline's CPU (`without_autotune`).
    # Training: a new epoch's first batch waits for its whole window of examples (~1 s of
    # serial work on the demo corpus), and the stages before hold no batches across that
    # boundary; a buffer of _TRAIN_PREFETCH batches lets the pipeline finish the next window
    # while the step trains on the buffer (the demo stalled ~1 s at each of its 22 epochs).
    return without_autotune(batches.prefetch(_TRAIN_PREFETCH if is_training else tf.data.AUTOTUNE))


def _examples(documents, window, is_training, seed, seq_length, short_seq_prob, use_next_sentence,
              tokenizer):
    """Unmasked examples, window by window; training: documents shuffled, epochs repeated."""
    if is_training:
        documents = documents.shuffle(window, seed=seed)  # A new order every epoch.
    examples = (
        documents.ragged_batch(window)
        .enumerate()
        .flat_map(
            lambda index, window_documents: _window_examples(
                index,
                window_documents[1],
                seed,
                seq_length - (3 if use_next_sentence else 2),
                short_seq_prob if use_next_sentence else 0.0,
                use_next_sentence,
                tokenizer,
                shuffle=is_training,
            )
        )
    )
    # Repeating last: an epoch without examples ends the dataset instead of spinning.
    return examples.repeat() if is_training else examples
