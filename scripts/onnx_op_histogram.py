#!/usr/bin/python3
"""Prints {"<domain>::<op_type>": count, ...} for an ONNX model, counted by python3-onnx
(nodes inside If/Loop/Scan subgraphs included). The inspect test compares it with
`glassbox inspect --json`."""
import json
import sys

import onnx


def count(graph, hist):
    for node in graph.node:
        key = (node.domain or "ai.onnx") + "::" + node.op_type
        hist[key] = hist.get(key, 0) + 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                count(attr.g, hist)
            for g in attr.graphs:
                count(g, hist)


def main():
    model = onnx.load(sys.argv[1], load_external_data=False)
    hist = {}
    count(model.graph, hist)
    print(json.dumps(hist, sort_keys=True))


if __name__ == "__main__":
    main()
