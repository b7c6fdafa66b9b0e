"""BertSpanLabeler: the shared harness."""

from bert_tf.models import BertEncoder, BertSpanLabeler
from tests.fixtures import TINY_CONFIG
from tests.harness import run_harness
from tests.models.conftest import encoder_batch


def test_harness(tmp_path):
    run_harness(lambda: BertSpanLabeler(BertEncoder(TINY_CONFIG)), encoder_batch(),
                {"start_logits": (3, 7), "end_logits": (3, 7)}, tmp_path, float32_outputs=True,
                untrained=("pooler/",))
