"""BertTokenClassifier: the shared harness."""

from bert_tf.models import BertEncoder, BertTokenClassifier
from tests.fixtures import TINY_CONFIG
from tests.harness import run_harness
from tests.models.conftest import encoder_batch


def test_harness(tmp_path):
    run_harness(lambda: BertTokenClassifier(BertEncoder(TINY_CONFIG), num_classes=5),
                encoder_batch(), (3, 7, 5), tmp_path, float32_outputs=True, untrained=("pooler/",))
