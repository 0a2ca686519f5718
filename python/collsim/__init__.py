"""collsim in Python: what collectives cost on a GPU cluster, in nccl-tests' vocabulary.

Every function runs the collsim command of the same name in-process, with the same options
(docs/cli.md; keyword arguments spell them without the dashes: ``nccl_version="2.22"`` is
``--nccl-version 2.22``) and returns its JSON output as plain Python objects: a row is a dict
with the CLI's CSV/JSON keys, so ``pandas.DataFrame(rows)`` just works.

    >>> import collsim
    >>> row = collsim.predict("dgx-h100", op="allreduce", bytes="1G")
    >>> rows = collsim.sweep("dgx-h100", op="allreduce", minbytes="1M", maxbytes="1G")
    >>> cluster = collsim.load("h100-16node-ib", nodes=4)
    >>> cluster.compare(op="allgather").info["crossovers"]

User mistakes raise collsim.Error (a ValueError) and option mistakes collsim.UsageError (a
TypeError), with the message the binary prints after "collsim: ".
"""

import json
import os

from ._collsim import Error, UsageError
from ._collsim import run as _run

__all__ = ["Error", "UsageError", "Rows", "Cluster", "load", "topo", "predict", "sweep",
           "compare", "scale", "validate", "calibrate", "import_topology", "run"]


class Rows(list):
    """A command's rows (dicts with docs/cli.md's keys); the command's other JSON keys (the run's
    settings, ranges, crossovers, statistics...) are in ``info``."""

    def __init__(self, rows, info):
        super().__init__(rows)
        self.info = info


def _option_words(name, value):
    """One keyword argument as command-line words: None and False leave the option out, True is
    a flag, a list repeats the option (``costs=[a, b]``). A trailing underscore spells an option
    that is a Python keyword (``from_="nvidia-smi"``)."""
    flag = "--" + name.rstrip("_").replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        words = []
        for v in value:
            words += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
        return words
    return [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]


def _command(command, config, options, fmt="json"):
    if "format" in options:
        raise UsageError("format: the Python module reads the JSON output; leave it out")
    args = [command, os.fspath(config)]
    for name, value in options.items():
        args += _option_words(name, value)
    if fmt:
        args += ["--format", fmt]
    return json.loads(_run(args))


def _rows(j):
    rows = j.pop("rows")
    return Rows(rows, j)


def run(*args):
    """Runs ``collsim ARGS...`` in-process and returns what it printed (a string)."""
    return _run([str(a) for a in args])


def topo(config, **options):
    """``collsim topo CONFIG --format json``: the cluster summary as a dict."""
    return _command("topo", config, options)


def predict(config, op, bytes, **options):
    """``collsim predict``: one row (a dict), with ``selected_by``, ``nccl_pick`` and ``note``
    when ``auto`` chose, and ``faster_alternative`` when one beats NCCL's pick."""
    return _command("predict", config, dict(op=op, bytes=bytes, **options))


def sweep(config, op, **options):
    """``collsim sweep`` (``minbytes``, ``maxbytes``, ``stepfactor`` as nccl-tests' -b -e -f):
    one row per size; ``info`` holds the run's settings."""
    return _rows(_command("sweep", config, dict(op=op, **options)))


def compare(config, op, **options):
    """``collsim compare``: one row per algorithm x protocol x size, with ``best`` and
    ``nccl_pick``; ``info`` holds the settings, ``ranges`` and ``crossovers``."""
    return _rows(_command("compare", config, dict(op=op, **options)))


def scale(config, op, bytes, nodes, **options):
    """``collsim scale``: ``nodes`` is a list of counts or a range string ("1:64"); one row per
    node count x algorithm x protocol, with ``nodes`` and ``best``."""
    if isinstance(nodes, (list, tuple)):
        nodes = ",".join(str(n) for n in nodes)
    return _rows(_command("scale", config, dict(op=op, bytes=bytes, nodes=nodes, **options)))


def validate(config, measurements, **options):
    """``collsim validate``: predicted against measured, one row per measured size with
    ``measured_us`` and ``error_pct``; ``info`` holds ``files`` and the error statistics."""
    if isinstance(measurements, (str, os.PathLike)):
        measurements = [measurements]
    return _rows(_command("validate", config, dict(measurements=measurements, **options)))


def calibrate(config, measurements, output, **options):
    """``collsim calibrate``: fits the cost parameters and writes the overlay to ``output`` (use
    it as ``costs=output``); one row per parameter (``parameter``, ``before``, ``fitted``,
    ``sigma``, ``determined_by``); ``info`` holds the error before and after."""
    if isinstance(measurements, (str, os.PathLike)):
        measurements = [measurements]
    return _rows(_command("calibrate", config,
                          dict(measurements=measurements, output=output, **options)))


def import_topology(path, **options):
    """``collsim import FILE``: the cluster YAML (a string) that collsim derives from NCCL's
    topology dump (NCCL_TOPO_DUMP_FILE) or ``nvidia-smi topo -m`` output."""
    args = ["import", os.fspath(path)]
    for name, value in options.items():
        args += _option_words(name, value)
    return _run(args)


class Cluster:
    """A cluster description loaded (and checked) once; its methods are the module's functions
    with ``config`` and ``nodes`` filled in."""

    def __init__(self, config, nodes=None):
        self.config = os.fspath(config)
        self.nodes = nodes
        self.summary = topo(self.config, nodes=nodes)

    def __repr__(self):
        s = self.summary
        return f"<collsim.Cluster {s['name']}: {s['gpus']} {s['gpu_model']} on {s['nodes']} nodes>"

    def _with_nodes(self, options):
        if self.nodes is not None:
            options.setdefault("nodes", self.nodes)
        return options

    def predict(self, op, bytes, **options):
        return predict(self.config, op, bytes, **self._with_nodes(options))

    def sweep(self, op, **options):
        return sweep(self.config, op, **self._with_nodes(options))

    def compare(self, op, **options):
        return compare(self.config, op, **self._with_nodes(options))

    def scale(self, op, bytes, nodes, **options):
        return scale(self.config, op, bytes, nodes, **options)

    def validate(self, measurements, **options):
        return validate(self.config, measurements, **self._with_nodes(options))

    def calibrate(self, measurements, output, **options):
        return calibrate(self.config, measurements, output, **self._with_nodes(options))


def load(config, nodes=None):
    """A preset name (``"dgx-h100"``) or a YAML path, at ``nodes`` nodes for a templated config.
    Raises collsim.Error with the loader's message when the description is wrong."""
    return Cluster(config, nodes)
