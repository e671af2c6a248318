"""Write the hostile parameter corpus (``tests/hostile/params/*.yaml``).

Run ``python tests/hostile/make_corpus.py`` after adding a case; the files are committed so
that a reviewer can read (and a fuzzer reuse) every case. Each file must be refused by
``python -m analysis validate`` and ``run`` with exit 1, one message, no traceback.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

HERE = Path(__file__).parent
OUT = HERE / "params"

BASE = {
    "name": "hostile",
    "title": "Hostile input",
    "candidates": ["H100-SXM", "H200", "MI300X", "MI325X"],
    "inference": {"model": "llama2-70b", "precision": "fp8", "isl": 1024, "osl": 256},
    "training": {"model": "llama3.1-8b", "tokens": 1.0e11, "cluster_gpus": 64},
    "cost": {"mode": "rent", "mc_draws": 2000, "seed": 7},
}

#: (section or None, key, value) numeric fields and their hostile values.
NUMERIC = [
    ("inference", "isl"),
    ("inference", "osl"),
    ("inference", "gpus_per_replica"),
    ("training", "tokens"),
    ("training", "cluster_gpus"),
    ("training", "seq_len"),
    ("training", "global_batch_tokens"),
    ("cost", "utilization"),
    ("cost", "pue"),
    ("cost", "electricity_usd_per_kwh"),
    ("cost", "colocation_usd_per_kw_month"),
    ("cost", "depreciation_years"),
    ("cost", "cost_of_capital"),
    ("cost", "fleet_gpus"),
    ("cost", "engineer_month_usd"),
    ("cost", "mc_draws"),
    ("cost", "seed"),
]
BAD_NUMBERS = {"inf": ".inf", "nan": ".nan", "neginf": "-.inf", "bool": "true", "str": '"5"'}
IMPLAUSIBLE = {
    "inference.isl": "2000000",
    "inference.osl": "-1",
    "inference.gpus_per_replica": "1000",
    "training.tokens": "1.0e30",
    "training.cluster_gpus": "0",
    "training.seq_len": "16",
    "training.global_batch_tokens": "1e-300",
    "cost.utilization": "1e-300",
    "cost.pue": "0.5",
    "cost.electricity_usd_per_kwh": "1e9",
    "cost.colocation_usd_per_kw_month": "-5",
    "cost.depreciation_years": "1e6",
    "cost.cost_of_capital": "3",
    "cost.fleet_gpus": "1e12",
    "cost.engineer_month_usd": "1e30",
    "cost.mc_draws": "10",
    "cost.seed": "-1",
}


def dump(doc: dict) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def with_value(section: str | None, key: str, raw: str) -> str:
    """BASE with ``section.key`` set to the raw YAML scalar ``raw``."""
    text = dump(BASE)
    if section is None:
        if f"\n{key}:" not in "\n" + text:
            return text + f"{key}: {raw}\n"
        # A function, not a template: backslashes in ``raw`` are YAML escapes, kept as is.
        return re.sub(rf"(?m)^{key}:.*$", lambda _: f"{key}: {raw}", text)
    lines = text.splitlines()
    out, inside, done = [], False, False
    for line in lines:
        if line.startswith(f"{section}:"):
            inside = True
            out.append(line)
            continue
        if inside and not line.startswith("  "):
            if not done:
                out.append(f"  {key}: {raw}")
                done = True
            inside = False
        if inside and line.startswith(f"  {key}:"):
            out.append(f"  {key}: {raw}")
            done = True
            continue
        out.append(line)
    if inside and not done:
        out.append(f"  {key}: {raw}")
    return "\n".join(out) + "\n"


def cases() -> dict[str, bytes]:
    c: dict[str, bytes] = {}

    def add(slug: str, text: str | bytes) -> None:
        c[slug] = text.encode("utf-8") if isinstance(text, str) else text

    for section, key in NUMERIC:
        for kind, raw in BAD_NUMBERS.items():
            add(f"{section}-{key}-{kind}", with_value(section, key, raw))
        add(
            f"{section}-{key}-implausible",
            with_value(section, key, IMPLAUSIBLE[f"{section}.{key}"]),
        )
    for acc_key in ("gpu_hour_usd", "server_price_usd"):
        for kind, raw in {"inf": ".inf", "bool": "true", "huge": "1.0e30", "zero": "0"}.items():
            add(f"cost-{acc_key}-{kind}", with_value("cost", acc_key, f"{{H200: {raw}}}"))
        add(f"cost-{acc_key}-unknown-id", with_value("cost", acc_key, "{H2000: 3}"))
    add("cost-porting-inf", with_value("cost", "porting_engineer_months", "{AMD: .inf}"))
    add("cost-porting-vendor", with_value("cost", "porting_engineer_months", "{Intel: 3}"))
    add("include-announced-int", with_value(None, "include_announced", "1"))
    # names, titles, text
    for slug, raw in {
        "name-trailing-newline": '"ci\\n"',
        "name-dotdot": '".."',
        "name-traversal": '"../../etc"',
        "name-absolute": '"/tmp/x"',
        "name-empty": '""',
        "name-too-long": '"' + "a" * 65 + '"',
        "name-markup": '"[/]"',
        "name-link-markup": '"[link=file:///etc/passwd]ci[/link]"',
        "name-int": "123",
        "name-null": "null",
        "title-blank": '"   "',
        "title-newline": '"a\\n# injected heading"',
        "title-too-long": '"' + "<script>" * 40 + '"',
        "title-list": "[a, b]",
        "description-control": '"a\\u0007b"',
    }.items():
        key = slug.split("-")[0]
        add(slug, with_value(None, key, raw))
    # candidates
    for slug, raw in {
        "candidates-one-vendor": "[H100-SXM, H200]",
        "candidates-amd-only": "[MI300X, MI325X]",
        "candidates-announced-only": "[VR200, MI455X]",
        "candidates-announced-nvidia": "[VR200, MI300X]",
        "candidates-duplicate": "[H200, H200, MI300X]",
        "candidates-unknown": "[H200, MI300]",
        "candidates-empty": "[]",
        "candidates-markup": '["[bold]H200[/]", MI300X]',
        "candidates-string": "H200",
    }.items():
        add(slug, with_value(None, "candidates", raw))
    # tiers and lengths
    tiers = {
        "tiers-out-of-order": "[{name: a, tpot_ms_max: 100, ttft_ms_max: 5000}, "
        "{name: b, tpot_ms_max: 50, ttft_ms_max: 2000}]",
        "tiers-unbounded-first": "[{name: a, tpot_ms_max: null, ttft_ms_max: null}, "
        "{name: b, tpot_ms_max: 50, ttft_ms_max: 2000}]",
        "tiers-duplicate-names": "[{name: x, tpot_ms_max: 50, ttft_ms_max: 2000}, "
        "{name: X , tpot_ms_max: 100, ttft_ms_max: 5000}]",
        "tiers-empty": "[]",
        "tiers-inf-bound": "[{name: a, tpot_ms_max: .inf, ttft_ms_max: 2000}]",
        "tiers-zero-bound": "[{name: a, tpot_ms_max: 0, ttft_ms_max: 2000}]",
        "tiers-blank-name": '[{name: " ", tpot_ms_max: 50, ttft_ms_max: 2000}]',
        "tiers-missing-key": "[{name: a, tpot_ms_max: 50}]",
        "tiers-too-many": "["
        + ", ".join(f"{{name: t{i}, tpot_ms_max: {10 + i}, ttft_ms_max: 2000}}" for i in range(9))
        + "]",
        "tiers-name-newline": '[{name: "a\\nb", tpot_ms_max: 50, ttft_ms_max: 2000}]',
    }
    for slug, raw in tiers.items():
        add(slug, with_value("inference", "tiers", raw))
    add("inference-longer-than-context", with_value("inference", "isl", "4000"))
    add("inference-model-unknown", with_value("inference", "model", "llama-9000"))
    add("inference-precision-int8", with_value("inference", "precision", "int8"))
    add("cost-mode-lease", with_value("cost", "mode", "lease"))
    # YAML hazards
    add(
        "yaml-alias-bomb",
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(
            f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]\n"
            for p, n in zip("abcdefgh", "bcdefghi", strict=True)
        ),
    )
    add(
        "yaml-alias-bomb-in-title",
        "x: &x ["
        + ",".join(["lol"] * 50)
        + "]\n"
        + "y: &y ["
        + ",".join(["*x"] * 50)
        + "]\n"
        + dump(BASE).replace("title: Hostile input", "title: [" + ",".join(["*y"] * 10) + "]"),
    )
    add("yaml-many-aliases", "a: &a 1\nb: [" + ",".join(["*a"] * 200) + "]\n")
    add("yaml-recursive-alias", "a: &a [*a]\n")
    add("yaml-duplicate-top-key", dump(BASE) + "name: other\n")
    add("yaml-duplicate-nested-key", dump(BASE).replace("  isl: 1024\n", "  isl: 1024\n  isl: 8\n"))
    add("yaml-deep-nesting", "name: " + "[" * 5000 + "]" * 5000 + "\n")
    add("yaml-deep-mapping", "a: " + "{b: " * 200 + "1" + "}" * 200 + "\n")
    add("yaml-huge-file", dump(BASE) + "# " + "x" * (300 * 1024) + "\n")
    add("yaml-huge-string", dump({**BASE, "title": "y" * 200_000}))
    add("yaml-python-tag", "name: !!python/object/apply:os.system ['echo pwned']\n")
    add("yaml-syntax-error", "name: [unclosed\ntitle: x\n")
    add("yaml-tab-indent", "inference:\n\tisl: 5\n")
    add("yaml-list-top", "- a\n- b\n")
    add("yaml-scalar-top", "just a string\n")
    add("yaml-empty", "")
    add("yaml-only-comment", "# nothing here\n")
    add("yaml-multi-document", dump(BASE) + "---\n" + dump(BASE))
    add("yaml-unhashable-key", "? [a, b]\n: 1\n")
    add("yaml-timestamp-name", with_value(None, "name", "2026-12-01"))
    add("yaml-unknown-top-key", dump({**BASE, "candidatez": ["H200"]}))
    add("yaml-unknown-nested-key", dump({**BASE, "cost": {**BASE["cost"], "pue_typo": 1.2}}))
    add("yaml-many-unknown-keys", dump({**BASE, **{f"k{i}": i for i in range(5000)}}))
    # encodings and bytes
    add("enc-latin1", ("name: caf\xe9\n" + dump(BASE).split("\n", 1)[1]).encode("latin-1"))
    add("enc-utf16", dump(BASE).encode("utf-16"))
    add("enc-nul-bytes", dump(BASE).encode() + b"\x00\x00")
    add("enc-binary", bytes(range(256)) * 4)
    add("enc-bom-invalid", b"\xef\xbb\xbf" + b"name: \xff\xfe\n")
    return c


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for i, (slug, data) in enumerate(sorted(cases().items()), start=1):
        (OUT / f"{i:03d}-{slug}.yaml").write_bytes(data)
    print(f"wrote {len(list(OUT.glob('*.yaml')))} files to {OUT}")


if __name__ == "__main__":
    main()
