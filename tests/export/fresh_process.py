"""Runs exported SavedModels in a clean interpreter that imports only TF and tensorflow-text.

Usage: python fresh_process.py REQUEST.json  (prints one JSON line)

REQUEST: {"resave": [{"export", "to"}],                           # load, save again to `to`
          "calls": [{"export", "signature", "inputs", "out"}],   # outputs -> out (.npz)
          "session_calls": [...same...],  # TF1 loader + Session, as TF Serving's C++ loader
          "threads": {"export", "signature", "inputs", "threads", "requests"}}
String inputs are base64 (so invalid UTF-8 survives JSON); nested lists give [B, C] inputs.
"""

import base64
import concurrent.futures
import json
import os
import sys
import threading

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf-text ops the SavedModels use)


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return base64.b64decode(value)


def _inputs(spec):
    inputs = {}
    for name, value in spec.items():
        if isinstance(value, dict):  # {"int32": nested list}
            inputs[name] = tf.constant(value["int32"], tf.int32)
        else:
            inputs[name] = tf.constant(_decode(value), tf.string)
    return inputs


def _numpy(outputs):
    return {name: value.numpy() for name, value in outputs.items()}


def _save(path, outputs):
    # Strings are saved as bytes arrays (`S` dtype), loadable without pickle.
    np.savez(path, **{name: value.astype(bytes) if value.dtype == object else value
                      for name, value in outputs.items()})


def _session_call(call):
    """Loads like TF Serving (import graph, run restore and init ops) and runs one signature."""
    values = _numpy(_inputs(call["inputs"]))
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.load(session, ["serve"], call["export"])
        signature = meta_graph.signature_def[call["signature"]]
        feeds = {signature.inputs[name].name: value for name, value in values.items()}
        fetches = {name: info.name for name, info in signature.outputs.items()}
        return session.run(fetches, feed_dict=feeds)


def _threads(spec):
    function = tf.saved_model.load(spec["export"]).signatures[spec["signature"]]
    inputs = _inputs(spec["inputs"])
    expected = _numpy(function(**inputs))

    lock, in_flight = threading.Lock(), [0, 0]  # calls running now, the most at once

    def request(_):
        with lock:
            in_flight[0] += 1
            in_flight[1] = max(in_flight)
        try:
            got = _numpy(function(**inputs))
        finally:
            with lock:
                in_flight[0] -= 1
        return all(np.array_equal(got[name], expected[name]) for name in expected)

    with concurrent.futures.ThreadPoolExecutor(spec["threads"]) as pool:
        futures = [pool.submit(request, i) for i in range(spec["threads"] * spec["requests"])]
        errors = sum(1 for f in futures if f.exception() is not None)
        mismatches = sum(1 for f in futures if f.exception() is None and not f.result())
    return {"requests": len(futures), "errors": errors, "mismatches": mismatches,
            "most_at_once": in_flight[1]}


def main(request_path):
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    reply, loaded = {}, {}
    for resave in request.get("resave", []):
        model = tf.saved_model.load(resave["export"])
        tf.saved_model.save(model, resave["to"], signatures=dict(model.signatures))
        reply.setdefault("resaved_assets", []).append(
            sorted(os.listdir(os.path.join(resave["to"], "assets"))))
    for call in request.get("calls", []):
        if call["export"] not in loaded:
            loaded[call["export"]] = tf.saved_model.load(call["export"])
        outputs = loaded[call["export"]].signatures[call["signature"]](**_inputs(call["inputs"]))
        _save(call["out"], _numpy(outputs))
    for call in request.get("session_calls", []):
        _save(call["out"], _session_call(call))
    if "threads" in request:
        reply["threads"] = _threads(request["threads"])
    reply["bert_tf_imported"] = any(name.split(".")[0] == "bert_tf" for name in sys.modules)
    print(json.dumps(reply))


if __name__ == "__main__":
    main(sys.argv[1])
