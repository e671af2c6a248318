"""Canonical identifiers: accelerators, models and precisions (design doc, "Canonical identifiers").

Parameters and datasets are validated against these lists; the datasets must cover every
id here (a data test checks it), so a typo in a parameter file fails early with the
closest known ids suggested.
"""

from __future__ import annotations

import difflib

#: Shipping accelerators, then announced ones (``status: announced`` in the spec table).
ACCELERATORS_SHIPPING: tuple[str, ...] = (
    "H100-SXM",
    "H200",
    "B200",
    "B300",
    "GB200",
    "GB300",
    "MI300X",
    "MI325X",
    "MI350X",
    "MI355X",
)
ACCELERATORS_ANNOUNCED: tuple[str, ...] = ("VR200", "MI455X")
ACCELERATORS: tuple[str, ...] = ACCELERATORS_SHIPPING + ACCELERATORS_ANNOUNCED

MODELS: tuple[str, ...] = (
    "llama2-70b",
    "llama3.1-8b",
    "llama3.1-70b",
    "llama3.1-405b",
    "deepseek-r1",
    "gpt-oss-120b",
    "mixtral-8x7b",
)
PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")
VENDORS: tuple[str, ...] = ("AMD", "NVIDIA")
#: Scale-up fabrics (spec column ``scaleup_topology``): ``switch`` (NVSwitch, NVLink
#: Switch, switched UALink: any two GPUs of the domain talk at a GPU's whole scale-up
#: bandwidth) or ``mesh`` (AMD's 8-GPU Infinity Fabric platforms: one link per peer pair;
#: :func:`analysis.hardware.scaleup_group_share`).
SCALEUP_TOPOLOGIES: tuple[str, ...] = ("switch", "mesh")


def vendor_of(accelerator: str) -> str:
    """Vendor of a canonical accelerator id (AMD Instinct ids start with ``MI``).

    >>> vendor_of("MI300X"), vendor_of("H200")
    ('AMD', 'NVIDIA')
    """
    return "AMD" if accelerator.startswith("MI") else "NVIDIA"


def status_of(accelerator: str) -> str:
    """``announced`` for announced parts, else ``shipping``.

    >>> status_of("VR200"), status_of("B200")
    ('announced', 'shipping')
    """
    return "announced" if accelerator in ACCELERATORS_ANNOUNCED else "shipping"


def shipping(accelerators: tuple[str, ...] | list[str]) -> list[str]:
    """The shipping parts of ``accelerators``, in order (announced parts never win).

    >>> shipping(["H200", "VR200", "MI355X"])
    ['H200', 'MI355X']
    """
    return [a for a in accelerators if a not in ACCELERATORS_ANNOUNCED]


def suggest(value: str, known: tuple[str, ...] | list[str], n: int = 3) -> list[str]:
    """Closest known ids to ``value`` (case-insensitive), best first.

    >>> suggest("mi300", ACCELERATORS)[0]
    'MI300X'
    """
    lowered = {k.lower(): k for k in known}
    matches = difflib.get_close_matches(value.lower(), list(lowered), n=n, cutoff=0.4)
    return [lowered[m] for m in matches]


def unknown_id_message(kind: str, value: str, known: tuple[str, ...] | list[str]) -> str:
    """One sentence naming an unknown id, the closest known ones, and all allowed ids."""
    close = suggest(value, known)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {kind} {value!r}.{hint} Allowed: {', '.join(known)}."


#: Rental quotes are compared within one pool: a provider class and a term.
#: ``marketplace-spot`` holds marketplaces of third-party hosts and every interruptible price.
PROVIDER_CLASSES: tuple[str, ...] = ("hyperscaler-list", "neocloud-list", "marketplace-spot")
RENTAL_TERMS: tuple[str, ...] = ("on-demand", "1-year", "3-year", "spot")
#: Every pool a scenario can choose (``cost.rental_pool``), as ``<provider class>/<term>``.
RENTAL_POOLS: tuple[str, ...] = tuple(f"{c}/{t}" for c in PROVIDER_CLASSES for t in RENTAL_TERMS)
