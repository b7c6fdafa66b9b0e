"""Pretraining batches straight from text files: tokenized, paired and masked in tf.data.

No offline step: each epoch sees new NSP pairs and new masks. Input is the
create_pretraining_data format (one sentence per line, blank lines between
documents; `.gz` ok). Per input pipeline:
1. Lines get a document key (a blank line or a new file starts a document);
   documents are sharded across pipelines by key.
2. Sentences are tokenized in batches with the package's tokenizer, then
   consecutive sentences of a document are packed into chunks of about
   `seq_length - 3` WordPieces (a random shorter target with probability
   `short_seq_prob`, per chunk).
3. Chunks are shuffled (`shuffle_buffer_size`), and each is paired with the one
   before it in shuffled order: with probability 0.5 (or if the chunk has one
   sentence) B is a random-start span of that other chunk ("NotNext", label 1;
   never from the same document), else A and B split the chunk at a random
   sentence ("IsNext", label 0). Unlike google-research, the chunk sentences
   not used by a NotNext pair are dropped, not put back.
4. Pairs are truncated longest-first (trim amounts split at random between the
   front and back), packed `[CLS] A [SEP] B [SEP]`, batched, and masked with
   `masking.mask_batch` (80/10/10, optional whole-word masking).
With `use_next_sentence=False` a chunk of `seq_length - 2` pieces becomes
`[CLS] A [SEP]` with label 0 (MLM only).

The batch structure equals `pretraining_dataset`'s model-input dict.
"""

import tensorflow as tf

from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from bert_tf.data import document_reader
from bert_tf.data import masking


def _lines_with_document_ids(files, is_training, seed):
    """(document key int64, line) for the non-blank lines of `files`.

    The key is `file_index * 2**32 + document_index_in_file`: the same document
    keeps its key in every epoch, so a NotNext partner never comes from it.
    """
    compression = "GZIP" if files[0].endswith(".gz") else ""
    if any(f.endswith(".gz") != bool(compression) for f in files):
        raise document_reader.InputError(f"mix of .gz and plain text files: {files}")
    dataset = tf.data.Dataset.from_tensor_slices((tf.range(len(files), dtype=tf.int64), files))
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed).repeat()

    def number(document_id, line):
        blank = tf.equal(tf.strings.length(tf.strings.strip(line)), 0)
        return document_id + tf.cast(blank, tf.int64), (document_id, line, blank)

    def file_lines(file_index, path):
        lines = tf.data.TextLineDataset(path, compression_type=compression)
        numbered = lines.scan(file_index * 2**32, number)
        return numbered.filter(lambda unused_id, unused_line, blank: ~blank).map(lambda key, line, blank: (key, line))

    return dataset.flat_map(file_lines)


def _tokenized_sentences(lines, tokenizer, batch_size=256):
    """(document_id, pieces [n] int32, word_ids [n] int64) per non-empty sentence."""
    def tokenize(document_ids, texts):
        return document_ids, tokenizer.tokenize(texts)  # [N, (words), (pieces)]

    return (lines.batch(batch_size).map(tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
            .unbatch().map(lambda d, t: (d, t.flat_values, t.value_rowids()))
            .filter(lambda d, pieces, word_ids: tf.size(pieces) > 0))


def _chunks(sentences, max_num_tokens, short_seq_prob, seed):
    """Packs consecutive sentences of a document into chunks (a scan over sentences).

    Yields (document_id, pieces [n], word_ids [n], sentence_lengths [k]);
    word ids count up through the chunk. The stream's last chunk is dropped.
    """
    empty = (tf.constant(-1, tf.int64), tf.zeros([0], tf.int32), tf.zeros([0], tf.int64), tf.zeros([0], tf.int64))

    def target_length(count):
        draws = tf.random.stateless_uniform([2], seed=tf.stack([seed, count]))
        short = 2 + tf.cast(draws[1] * tf.cast(max_num_tokens - 1, tf.float32), tf.int64)
        return tf.where(draws[0] < short_seq_prob, short, tf.cast(max_num_tokens, tf.int64))

    def step(state, sentence):
        count, target, chunk = state
        doc, pieces, word_ids, lengths = chunk
        new_doc, new_pieces, new_word_ids = sentence
        alone = (new_doc, new_pieces, new_word_ids, tf.shape(new_pieces, out_type=tf.int64))

        def grow():
            grown = (new_doc, tf.concat([pieces, new_pieces], 0),
                     tf.concat([word_ids, new_word_ids + tf.reduce_max(tf.concat([word_ids, [-1]], 0)) + 1], 0),
                     tf.concat([lengths, alone[3]], 0))
            return tf.cond(tf.size(grown[1], out_type=tf.int64) >= target,
                           lambda: (True, grown, empty), lambda: (False, empty, grown))

        # A sentence of another document closes the chunk; else close once the target is reached.
        ready, emitted, kept = tf.cond((doc != new_doc) & (tf.size(pieces) > 0),
                                       lambda: (True, chunk, alone), grow)
        count += tf.cast(ready, tf.int64)
        return (count, tf.where(ready, target_length(count), target), kept), (ready, emitted)

    initial = (tf.constant(0, tf.int64), target_length(tf.constant(0, tf.int64)), empty)
    return sentences.scan(initial, step).filter(_first).map(_second)


def _first(ready, unused_chunk):
    return ready


def _second(unused_ready, chunk):
    return chunk


def _with_previous(chunks):
    """(chunk, previous chunk) pairs; the first chunk only serves as a partner."""
    empty = (tf.constant(-1, tf.int64), tf.zeros([0], tf.int32), tf.zeros([0], tf.int64), tf.zeros([0], tf.int64))
    pairs = chunks.scan(empty, lambda previous, chunk: (chunk, (chunk, previous)))
    return pairs.filter(lambda unused_chunk, previous: previous[0] >= 0)


def _word_starts(word_ids):
    return tf.concat([tf.ones_like(word_ids[:1], tf.bool), word_ids[1:] != word_ids[:-1]], 0)


def _trimmed_lengths(length_a, length_b, max_num_tokens):
    """Lengths after google-research truncate_seq_pair (longer first, B on ties)."""
    half_a, half_b = (max_num_tokens + 1) // 2, max_num_tokens // 2
    fits = length_a + length_b <= max_num_tokens
    new_a = tf.where(fits | (length_a <= half_a), length_a,
                     tf.where(length_b <= half_b, max_num_tokens - length_b, half_a))
    new_b = tf.where(fits | (length_b <= half_b), length_b,
                     tf.where(length_a <= half_a, max_num_tokens - length_a, half_b))
    return new_a, new_b


def _trim(pieces, word_ids, new_length, seed):
    """Keeps `new_length` pieces, removing a Binomial(excess, 1/2) share from the front."""
    excess = tf.size(pieces, out_type=tf.int64) - new_length
    front = tf.random.stateless_binomial([], seed=seed, counts=tf.cast(excess, tf.float32), probs=0.5,
                                         output_dtype=tf.int64)
    return pieces[front:front + new_length], word_ids[front:front + new_length]


def _pair_example(index, chunk, partner, seed, max_num_tokens, cls_id, sep_id):
    """One NSP example (unmasked) from a chunk and a partner chunk of the stream."""
    doc, pieces, word_ids, lengths = chunk
    partner_doc, partner_pieces, partner_word_ids, partner_lengths = partner
    seeds = tf.random.experimental.stateless_split(tf.stack([seed, index]), num=4)
    draws = tf.random.stateless_uniform([3], seed=seeds[0])
    num_sentences = tf.size(lengths, out_type=tf.int64)
    a_end = tf.where(num_sentences >= 2,
                     1 + tf.cast(draws[0] * tf.cast(num_sentences - 1, tf.float32), tf.int64), 1)
    same_document = tf.equal(doc, partner_doc)
    random_next = ((num_sentences == 1) | (draws[1] < 0.5)) & ~same_document
    length_a = tf.reduce_sum(lengths[:a_end])
    partner_start = tf.reduce_sum(
        partner_lengths[:tf.cast(draws[2] * tf.cast(tf.size(partner_lengths), tf.float32), tf.int64)])
    a, word_ids_a = pieces[:length_a], word_ids[:length_a]
    b, word_ids_b = tf.cond(random_next,
                            lambda: (partner_pieces[partner_start:], partner_word_ids[partner_start:]),
                            lambda: (pieces[length_a:], word_ids[length_a:]))
    new_a, new_b = _trimmed_lengths(tf.size(a, out_type=tf.int64), tf.size(b, out_type=tf.int64), max_num_tokens)
    a, word_ids_a = _trim(a, word_ids_a, new_a, seeds[1])
    b, word_ids_b = _trim(b, word_ids_b, new_b, seeds[2])
    cls, sep, true = tf.constant([cls_id]), tf.constant([sep_id]), tf.constant([True])
    return {
        "input_ids": tf.concat([cls, a, sep, b, sep], 0),
        "input_type_ids": tf.concat([tf.zeros([new_a + 2], tf.int32), tf.ones([new_b + 1], tf.int32)], 0),
        "word_starts": tf.concat([true, _word_starts(word_ids_a), true, _word_starts(word_ids_b), true], 0),
        "next_sentence_labels": tf.cast(random_next, tf.int32),
        # A one-sentence chunk whose partner is from its own document makes no pair.
        "valid": ~((num_sentences == 1) & same_document),
    }


def _single_example(chunk, max_num_tokens, cls_id, sep_id):
    """An MLM-only example `[CLS] A [SEP]` from a chunk."""
    _, pieces, word_ids, _ = chunk
    a, word_ids_a = pieces[:max_num_tokens], word_ids[:max_num_tokens]
    return {
        "input_ids": tf.concat([[cls_id], a, [sep_id]], 0),
        "input_type_ids": tf.zeros(tf.size(a) + 2, tf.int32),
        "word_starts": tf.concat([[True], _word_starts(word_ids_a), [True]], 0),
        "next_sentence_labels": tf.constant(0, tf.int32),
        "valid": tf.constant(True),
    }


def dynamic_pretraining_dataset(text_patterns, vocab_file, lower_case, batch_size, seq_length,
                                max_predictions_per_seq, masked_lm_prob=0.15, whole_word_mask=False,
                                use_next_sentence=True, short_seq_prob=0.1, is_training=True, input_context=None,
                                seed=0, skip_batches=0, shuffle_buffer_size=1000):
    """Batches of pretraining examples built in-graph from text files.

    The order is a deterministic function of files, `seed` and the input
    pipeline, so a resumed run can continue with `skip_batches` = number of
    batches this pipeline already produced.

    Args:
      text_patterns: comma-separated globs (str) or list of globs; one sentence
        per line, blank lines between documents, all `.gz` or all plain.
      vocab_file, lower_case: the tokenizer (the package's `BertTokenizer`).
      batch_size: global batch size; each pipeline yields the per-replica share
        when `input_context` is given.
      seq_length: S, length of the padded sequences.
      max_predictions_per_seq: P, length of the masked-LM arrays.
      masked_lm_prob: fraction of pieces to mask (capped at P).
      whole_word_mask: mask all pieces of a word together.
      use_next_sentence: False: single-segment MLM-only examples, labels 0.
      short_seq_prob: probability of a chunk with a random shorter target.
      is_training: shuffle files and repeat forever, dropping partial batches;
        else one pass in file order, keeping the last partial batch.
      input_context: optional `tf.distribute.InputContext`; documents are
        sharded per input pipeline.
      seed: int seed for shuffling, pairing and masking.
      skip_batches: batches to skip at the start (resuming).
      shuffle_buffer_size: chunks in the buffer that pairs chunks for NotNext.

    Returns:
      A `tf.data.Dataset` of dicts: `input_word_ids, input_mask,
      input_type_ids` int32 [B, S]; `masked_lm_positions, masked_lm_ids`
      int32 [B, P]; `masked_lm_weights` float32 [B, P];
      `next_sentence_labels` int32 [B].

    Raises:
      document_reader.InputError: if a pattern matches no file.

    Example:
    >>> ds = dynamic_pretraining_dataset("bert_tf/data/corpus/train.txt.gz", "bert_tf/data/corpus/vocab.txt",
    ...     lower_case=True, batch_size=32, seq_length=128, max_predictions_per_seq=20)  # doctest: +SKIP
    """
    files = document_reader.expand_input_patterns(text_patterns)
    tokenizer = BertTokenizer(vocab_file, lower_case=lower_case)
    num_pipelines, pipeline_id = 1, 0
    if input_context is not None:
        num_pipelines, pipeline_id = input_context.num_input_pipelines, input_context.input_pipeline_id
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    seed = (seed or 0) * 1000 + pipeline_id  # Independent streams per pipeline; None acts as 0.
    max_num_tokens = seq_length - (3 if use_next_sentence else 2)

    lines = _lines_with_document_ids(files, is_training, seed)
    lines = lines.filter(lambda key, unused_line: key % num_pipelines == pipeline_id)
    sentences = _tokenized_sentences(lines, tokenizer)
    chunks = _chunks(sentences, max_num_tokens, short_seq_prob if use_next_sentence else 0.0, seed)
    if use_next_sentence:
        pairs = _with_previous(chunks.shuffle(shuffle_buffer_size, seed=seed)).enumerate()
        examples = pairs.map(
            lambda index, pair: _pair_example(index, pair[0], pair[1], seed, max_num_tokens, tokenizer.cls_id,
                                              tokenizer.sep_id),
            num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    else:
        examples = chunks.shuffle(shuffle_buffer_size, seed=seed).map(
            lambda *chunk: _single_example(chunk, max_num_tokens, tokenizer.cls_id, tokenizer.sep_id),
            num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    examples = examples.filter(lambda example: example.pop("valid"))
    batches = examples.ragged_batch(batch_size, drop_remainder=is_training).enumerate()
    if skip_batches:
        batches = batches.skip(skip_batches)
    static_batch = batch_size if is_training else None
    special_ids = [tokenizer.cls_id, tokenizer.sep_id]

    def finish(index, batch):
        masked, positions, labels = masking.mask_batch(
            batch["input_ids"], batch["word_starts"], tf.stack([tf.constant(seed, tf.int64), index]),
            tokenizer.vocab_size, tokenizer.mask_id, special_ids, masked_lm_prob, max_predictions_per_seq,
            whole_word_mask)
        sequence_shape, predictions_shape = [static_batch, seq_length], [static_batch, max_predictions_per_seq]
        return {
            "input_word_ids": masked.to_tensor(shape=sequence_shape),
            "input_mask": tf.ones_like(masked).to_tensor(shape=sequence_shape),
            "input_type_ids": batch["input_type_ids"].to_tensor(shape=sequence_shape),
            "masked_lm_positions": positions.to_tensor(shape=predictions_shape),
            "masked_lm_ids": tf.cast(labels, tf.int32).to_tensor(shape=predictions_shape),
            "masked_lm_weights": tf.ones_like(labels, tf.float32).to_tensor(shape=predictions_shape),
            "next_sentence_labels": batch["next_sentence_labels"],
        }

    return batches.map(finish, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).prefetch(tf.data.AUTOTUNE)
