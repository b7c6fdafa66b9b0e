"""GraphBuilder: ONNX nodes and initializers with unique names, and the model around them.

Example:
>>> graph = GraphBuilder()                                               # doctest: +SKIP
>>> doubled = graph.op("Mul", ["x", graph.constant(2.0, "two")])         # doctest: +SKIP
"""

import numpy as np

from bert_tf.errors import require_extra

MS_DOMAIN = "com.microsoft"


class GraphBuilder:
    """Nodes and initializers with unique names; `model()` wraps them into a ModelProto."""

    def __init__(self, parent=None):
        self.onnx = require_extra("onnx", extra="onnx")
        self.nodes = []
        # A subgraph's (a Loop body's) constants and names come from its parent graph.
        self._root = parent._root if parent is not None else self
        self.initializers, self._count = [], 0

    def name(self, prefix):
        self._root._count += 1
        return f"{prefix}_{self._root._count}"

    def constant(self, value, name, dtype=np.float32):
        """An initializer holding `value`; returns its name."""
        name = self.name(name)
        array = np.array(value, dtype=dtype)  # a copy, C-ordered; 0-d stays 0-d
        self._root.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def op(self, op_type, inputs, outputs=1, domain=None, name=None, **attributes):
        """Adds a node; returns its output name (or the list of them for `outputs` > 1)."""
        if isinstance(outputs, int):
            outputs = [self.name(f"{name or op_type}_out") for _ in range(outputs)]
        self.nodes.append(self.onnx.helper.make_node(
            op_type, inputs, outputs, name=self.name(name or op_type), domain=domain,
            **attributes))
        return outputs[0] if len(outputs) == 1 else outputs

    def rename(self, outputs):
        """Gives node outputs their public names: `outputs` is `{public name: output}`."""
        renames = {value: name for name, value in outputs.items()}
        for node in self.nodes:
            node.output[:] = [renames.get(value, value) for value in node.output]
            node.input[:] = [renames.get(value, value) for value in node.input]

    def model(self, inputs, outputs, opset, metadata, domains=()):
        """The ModelProto of the graph: value infos `inputs` and `outputs`, the ai.onnx
        `opset`, com.microsoft and `domains` (version 1 each), `metadata` as its props."""
        helper = self.onnx.helper
        graph = helper.make_graph(self.nodes, "bert_tf", inputs, outputs, self.initializers)
        opsets = [helper.make_opsetid("", opset), helper.make_opsetid(MS_DOMAIN, 1),
                  *(helper.make_opsetid(domain, 1) for domain in domains)]
        model = helper.make_model(graph, opset_imports=opsets, producer_name="bert_tf")
        # The oldest IR version that holds the opsets, so older runtimes load the file.
        model.ir_version = helper.find_min_ir_version_for(opsets[:1], ignore_unknown=True)
        helper.set_model_props(model, {key: str(value) for key, value in metadata.items()})
        return model
