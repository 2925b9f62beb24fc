"""Throughput of jaxecon beside the reference numpy implementation (ai-economist 1.7.1).

    python benchmarks/throughput.py [--batch-sizes 1,16,256,1024,4096] [--steps 200]
                                    [--economies default,gtb100,covid19] [--no-reference]
                                    [--device cpu|gpu|tpu] [--json FILE]

A thin script over :mod:`jaxecon.cli.bench` (the same as ``jaxecon bench``);
see :mod:`jaxecon.bench` for what is measured and how. Each economy's reference figure
(ai-economist 1.7.1, COVID-19 included) is measured in the same run.
"""

from jaxecon.cli.bench import main

if __name__ == "__main__":
    main()
