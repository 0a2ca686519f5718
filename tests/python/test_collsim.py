"""The Python module runs the CLI's commands: the same rows, keys and messages as the binary.

Run by ctest (tests/python/CMakeLists.txt) with PYTHONPATH=build/python and COLLSIM_BIN set to
the collsim binary the rows are compared with.
"""

import json
import os
import subprocess

import pytest

import collsim

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")
DATA = os.path.join(SOURCE, "tests", "data", "nccl-tests")
ALLREDUCE = os.path.join(DATA, "rtx2080ti-x2_1node-pcie-noP2P_allreduce_anthony-hoo-blog.txt")
ALLGATHER = os.path.join(DATA, "rtx2080ti-x2_1node-pcie-noP2P_allgather_anthony-hoo-blog.txt")
# docs/cli.md "Output": the columns of every row, in this order.
COLUMNS = ["collective", "algorithm", "protocol", "channels", "ranks", "bytes", "count", "dtype",
           "time_us", "algbw_GBps", "busbw_GBps"]


def cli(*args):
    """The binary's (stdout, stderr, exit status)."""
    p = subprocess.run([os.environ["COLLSIM_BIN"], *args], capture_output=True, text=True)
    return p.stdout, p.stderr, p.returncode


def test_predict_is_the_clis_json_row():
    row = collsim.predict("dgx-h100", op="allreduce", bytes="16M")
    out, _, rc = cli("predict", "dgx-h100", "--op", "allreduce", "--bytes", "16M",
                     "--format", "json")
    assert rc == 0
    assert row == json.loads(out)
    assert list(row)[:len(COLUMNS)] == COLUMNS
    assert row["bytes"] == 1 << 24 and row["ranks"] == 8


def test_keyword_arguments_are_the_clis_options():
    row = collsim.predict("dgx-h100", op="allgather", bytes=1 << 24, algo="ring", proto="ll128",
                          channels=8, model="alpha-beta", nccl_version="2.22")
    out, _, _ = cli("predict", "dgx-h100", "--op", "allgather", "--bytes", str(1 << 24),
                    "--algo", "ring", "--proto", "ll128", "--channels", "8", "--model",
                    "alpha-beta", "--nccl-version", "2.22", "--format", "json")
    assert row == json.loads(out)
    assert (row["algorithm"], row["protocol"], row["channels"]) == ("ring", "ll128", 8)


def test_sweep_rows_are_flat_records_with_the_csv_columns():
    rows = collsim.sweep("dgx-h100", op="allreduce", minbytes="1M", maxbytes="64M", stepfactor=4)
    assert isinstance(rows, list) and len(rows) == 4  # 1M 4M 16M 64M
    assert [r["bytes"] for r in rows] == [1 << 20, 1 << 22, 1 << 24, 1 << 26]
    for r in rows:  # what pandas.DataFrame(rows) needs: dicts of scalars, same leading keys
        assert list(r)[:len(COLUMNS)] == COLUMNS
        assert all(not isinstance(v, (dict, list)) for v in r.values())
    assert rows.info["cluster"] == "dgx-h100" and rows.info["ranks"] == 8
    out, _, _ = cli("sweep", "dgx-h100", "--op", "allreduce", "-b", "1M", "-e", "64M", "-f", "4",
                    "--format", "json")
    assert list(rows) == json.loads(out)["rows"]


def test_compare_and_scale_keep_ranges_and_crossovers():
    rows = collsim.compare("dgx-h100", op="allreduce", minbytes="1K", maxbytes="32M",
                           stepfactor=32)
    assert sum(1 for r in rows if r["best"]) == 4  # one best per size: 1K 32K 1M 32M
    assert "ranges" in rows.info and "crossovers" in rows.info
    s = collsim.scale("h100-16node-ib", op="allreduce", bytes="256M", nodes=[1, 2, 4],
                      model="alpha-beta")
    assert sorted({r["nodes"] for r in s}) == [1, 2, 4]
    assert {r["ranks"] for r in s if r["nodes"] == 4} == {32}


def test_load_binds_the_config_and_node_count():
    c = collsim.load("h100-16node-ib", nodes=4)
    assert c.summary["gpus"] == 32
    assert c.predict("allreduce", "1M") == collsim.predict("h100-16node-ib", "allreduce", "1M",
                                                          nodes=4)
    assert "32 H100" in repr(c)


def test_validate_and_calibrate_on_a_published_log(tmp_path):
    v = collsim.validate("pcie-2gpu", ALLGATHER)
    assert v and all("measured_us" in r and "error_pct" in r for r in v)
    assert v.info["median_abs_error_pct"] is not None
    overlay = tmp_path / "fit.yaml"
    fit = collsim.calibrate("pcie-2gpu", [ALLREDUCE], overlay)
    assert overlay.exists() and fit.info["output"] == str(overlay)
    assert any(p["fitted"] is not None for p in fit)
    again = collsim.validate("pcie-2gpu", ALLREDUCE, costs=[overlay])
    assert again.info["median_abs_error_pct"] == pytest.approx(
        fit.info["after"]["median_abs_error_pct"], abs=0.01)


def test_user_errors_carry_the_clis_message():
    _, err, rc = cli("predict", "dgx-h100", "--op", "allreduce", "--bytes", "1Q")
    assert rc == 1
    with pytest.raises(collsim.Error) as e:
        collsim.predict("dgx-h100", op="allreduce", bytes="1Q")
    assert isinstance(e.value, ValueError)
    assert err == f"collsim: {e.value}\n"
    assert str(e.value) == '--bytes: expected a size such as "64MiB", got "1Q"'


def test_a_bad_config_fails_at_load(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nnodes: fast\n")
    _, err, rc = cli("topo", str(bad))
    assert rc == 1
    with pytest.raises(collsim.Error) as e:
        collsim.load(bad)
    assert err == f"collsim: {e.value}\n"
    assert str(e.value).startswith(str(bad) + ":")
    with pytest.raises(collsim.Error, match="no-such-preset"):
        collsim.load("no-such-preset")


def test_usage_errors_are_type_errors():
    _, err, rc = cli("predict", "dgx-h100", "--op", "allreduce", "--bytes", "1G", "--colour", "3")
    assert rc == 2
    with pytest.raises(collsim.UsageError) as e:
        collsim.predict("dgx-h100", op="allreduce", bytes="1G", colour=3)
    assert isinstance(e.value, TypeError)
    assert err.startswith(f"collsim: {e.value}\n")
    with pytest.raises(collsim.UsageError, match="format"):
        collsim.sweep("dgx-h100", op="allreduce", format="csv")


def test_same_call_same_answer():
    a = collsim.compare("dgx-a100", op="allgather", minbytes="1M", maxbytes="16M")
    b = collsim.compare("dgx-a100", op="allgather", minbytes="1M", maxbytes="16M")
    assert a == b and a.info == b.info


def test_docs_python_md_examples():
    import doctest
    path = os.path.join(SOURCE, "docs", "python.md")
    result = doctest.testfile(path, module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 10


def test_import_topology_returns_the_clis_yaml(tmp_path):
    smi = os.path.join(SOURCE, "tests", "data", "import", "h100x8-nvidia-smi-topo.txt")
    yaml = collsim.import_topology(smi, nic_bandwidth="400Gbps", name="lab")
    out, _, rc = cli("import", smi, "--nic-bandwidth", "400Gbps", "--name", "lab")
    assert rc == 0 and yaml == out
    path = tmp_path / "lab.yaml"
    path.write_text(yaml)
    assert collsim.load(path).summary["gpus"] == 8
    with pytest.raises(collsim.Error, match="--nic-bandwidth"):
        collsim.import_topology(smi)
    with pytest.raises(collsim.Error, match="1:2: expected an XML element"):
        collsim.import_topology(smi, from_="nccl-xml")


def test_topo_svg_is_a_well_formed_svg_document(tmp_path):
    import xml.etree.ElementTree as ElementTree
    svg = tmp_path / "dgx.svg"
    out = collsim.run("topo", "dgx-h100", "--svg", svg)
    assert out.endswith(f"wrote {svg}\n")
    root = ElementTree.parse(svg).getroot()  # raises on malformed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
    assert {f"node0/gpu{i}" for i in range(8)} <= titles


def test_commands_from_several_threads_each_get_their_own_output():
    import threading
    results = {}

    def work(op):
        results[op] = collsim.predict("dgx-h100", op=op, bytes="1M", algo="ring",
                                      model="alpha-beta")

    threads = [threading.Thread(target=work, args=(op,))
               for op in ("allreduce", "allgather", "broadcast", "reducescatter")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {op: r["collective"] for op, r in results.items()} == {op: op for op in results}
    assert results["allreduce"] == collsim.predict("dgx-h100", op="allreduce", bytes="1M",
                                                   algo="ring", model="alpha-beta")
