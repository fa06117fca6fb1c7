"""Optional dependencies: the packages one feature needs, installed with an extra.

``kubernetes-validate`` (the Kubernetes API's JSON Schemas, ~70 MB and ~17,000 files;
docs/performance-k8s-extra.md) is needed only by the Kubernetes manifest features:
``rtc compile --target k8s`` validates every manifest it writes, ``rtc lint`` validates the
pod templates of the manifests it reads. It is the ``k8s`` extra of this checkout
(``pip install '.[k8s]'`` in it: rtc is installed from its source, and ``rtc[k8s]`` would
fetch whatever package PyPI calls rtc); without it those features report :func:`missing_k8s` and write nothing.
"""

from __future__ import annotations

from rtc.diagnostics import Diagnostic, error
from rtc.rules import TOOL_REQUIRED

#: The command that installs the Kubernetes extra.
K8S_INSTALL = "pip install '.[k8s]' from the rtc checkout (.venv/bin/pip install -e '.[k8s]' into its venv)"


class MissingExtra(ImportError):
    """An optional package a feature needs is not installed: :attr:`diagnostic` is the
    RTC006 error that says which and how to install it."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def missing_k8s(feature: str) -> Diagnostic:
    """The RTC006 error of ``feature`` (e.g. ``--target k8s``) when kubernetes-validate is
    not installed."""
    return error(TOOL_REQUIRED, f"{feature} needs the Python package kubernetes-validate "
                 "(the Kubernetes API schemas every manifest is checked against), which is "
                 "not installed", hint=f"install the Kubernetes extra: {K8S_INSTALL}")


def kubernetes_validate(feature: str):
    """The ``kubernetes_validate`` module; raises :class:`MissingExtra` (RTC006, naming
    :data:`K8S_INSTALL`) when it is not installed."""
    try:
        import kubernetes_validate as module
    except ImportError:
        raise MissingExtra(missing_k8s(feature)) from None
    return module
