"""rtc.cli.lean_params: rtc's parameter values converted without pydantic, exactly as
typer's own (pydantic) conversion converts them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from rtc.cli import lean_params

typer_coercion = pytest.importorskip("typer._coercion")
core = pytest.importorskip("typer.core")
models = pytest.importorskip("typer.models")


def _convert(build, annotation, info, value):
    """(result, None) or (None, error message) of converting ``value``."""
    from typer._click import Context
    from typer._click.exceptions import BadParameter

    descriptor = typer_coercion.resolve_type_descriptor(annotation, info)
    param = None
    ctx = Context(core.TyperCommand("t"))
    try:
        return build(descriptor)._coerce_value(value, param=param, ctx=ctx), None
    except BadParameter as exc:
        return None, type(exc).__name__


CASES = [
    (str, {}, "hccl.json"), (str, {}, ""), (str, {}, "ünïcode"),
    (int, {}, "12"), (int, {}, " 7 "), (int, {}, "-3"), (int, {}, 5),
    (int, {"min": 1}, "1"), (int, {"min": 1}, "0"), (int, {"min": 0, "max": 9}, "10"),
    (int, {}, "abc"), (int, {}, "1.5"), (int, {}, ""),
    (float, {}, "1.5"), (float, {}, " 2 "), (float, {}, "1e3"), (float, {}, "1_0"),
    (float, {}, "inf"), (float, {}, 3), (float, {}, 2.5), (float, {"min": 0}, "0"),
    (float, {"min": 0}, "-0.5"), (float, {"min": 0, "max": 9}, "9.5"),
    (float, {}, "abc"), (float, {}, "0x10"), (float, {}, ""), (float, {"min": 0}, "nan"),
    (bool, {}, True), (bool, {}, False),
    (Path, {}, "examples/a2-2node-dp2-tp8.rtc"), (Path, {}, "no/such/file"), (Path, {}, "-"),
    (list[str], {}, ("a", "b")), (list[str], {}, ()),
    (list[Path], {}, ("x.json", "examples")),
]


@pytest.mark.skipif(not lean_params.install(), reason="this typer has no pydantic conversion")
@pytest.mark.parametrize("annotation, kwargs, value", CASES)
def test_lean_conversion_equals_typers_own(annotation, kwargs, value, monkeypatch):
    monkeypatch.chdir(ROOT)
    info = models.OptionInfo(**kwargs)
    lean = core.build_runtime_param
    original = lean.typer_original
    got = _convert(lean, annotation, info, value)
    want = _convert(original, annotation, info, value)
    assert got == want
    if got[0] is not None:
        assert type(got[0]) is type(want[0])


def test_compile_imports_no_pydantic(tmp_path):
    code = ("import sys; sys.argv = ['rtc', 'compile', sys.argv[1], '-o', sys.argv[2]]\n"
            "from rtc.cli import main, lean_params\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code, lean_params.install(), 'pydantic' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples" / "a2-2node-dp2-tp8.rtc"),
                          str(tmp_path / "x.json")], capture_output=True, text=True, timeout=60)
    code, installed, pydantic = res.stdout.split()
    assert code == "0"
    if installed == "True":
        assert pydantic == "False"


def test_validate_imports_no_pydantic(tmp_path):
    """`rtc validate` has a float option (--wait): it too runs without pydantic."""
    table = tmp_path / "x.json"
    subprocess.run([sys.executable, "-m", "rtc", "compile", str(ROOT / "examples" / "a2-2node-dp2-tp8.rtc"),
                    "-o", str(table)], check=True, capture_output=True, timeout=60)
    code = ("import sys; sys.argv = ['rtc', 'validate', '--wait', '0.5', sys.argv[1]]\n"
            "from rtc.cli import main, lean_params\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code, lean_params.install(), 'pydantic' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code, str(table)], capture_output=True, text=True,
                         timeout=60)
    code, installed, pydantic = res.stdout.split()[-3:]  # after what validate prints
    assert code == "0"
    if installed == "True":
        assert pydantic == "False"
