"""The docs stay short, keep each figure in one place and point only at what exists.

README.md is at most 200 lines and WORKSPACE.md a guide of at most 300 (reasons go to
docs/design.md, logs to docs/lab/, measured figures to benchmarks/README.md). Every relative
markdown link in the docs (and the heading its `#anchor` names), and every repository path the
guides name in backticks (`bert_tf/...py`, `tools/...py`, `benchmarks/...`, `docs/...`, or a module
path inside the package such as `layers/packing.py`), must exist: a file that moves leaves no
stale pointer behind. A failure lists every missing path at once.
"""

import glob
import itertools
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "bert_tf")
MAX_WORKSPACE_LINES = 300
MAX_README_LINES = 200
MAX_DESIGN_LINES = 800

# Guides whose backticked paths must exist (the README, WORKSPACE.md and every docs/*.md page);
# dated logs (docs/lab/) and the changelog name files as they were, so only their links are
# checked.
GUIDES = ["README.md", "WORKSPACE.md", "benchmarks/README.md"] + sorted(
    os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "docs", "*.md")))
LINKED = GUIDES + ["CHANGELOG.md"] + sorted(
    os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "docs", "lab", "*.md")))
TOP_LEVEL = ("bert_tf/", "tools/", "benchmarks/", "docs/", "dev/", "tests/", "official_configs/")

_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)
# The demo's held-out result: its home is benchmarks/README.md (and the demo config's header).
DEMO_FIGURE = "0.4276"
DEMO_FIGURE_HOMES = ["benchmarks/README.md"]


def _read(relative):
    with open(os.path.join(ROOT, relative), encoding="utf-8") as f:
        return f.read()


def _expand_braces(token):
    """`a.{npz,json}` -> [`a.npz`, `a.json`]; no braces -> [token]."""
    parts = re.split(r"\{([^{}]*)\}", token)
    choices = [[part] if i % 2 == 0 else part.split(",") for i, part in enumerate(parts)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def _exists(path):
    return any(glob.glob(path)) if any(c in path for c in "*?[") else os.path.exists(path)


def _candidate(token):
    """The absolute path a backticked token names, or None when it names no repository path."""
    token = token.strip(".,;:'\"()")
    if token.startswith(TOP_LEVEL):
        return os.path.join(ROOT, token)
    first = token.split("/")[0]
    if "/" in token and (token.endswith(".py") or token.endswith("/")) and os.path.isdir(
            os.path.join(PACKAGE, first)):
        return os.path.join(PACKAGE, token)  # a module path inside the package: layers/packing.py
    return None


def missing_code_paths(relative):
    """Backticked repository paths in a guide (inline code and code blocks) that do not exist."""
    text = _read(relative)
    spans = [match.group(1) for match in _CODE_SPAN.finditer(_FENCE.sub("", text))]
    # In code blocks (commands, layouts) only paths spelled from the repository root count.
    block_tokens = [token for block in _FENCE.findall(text) for token in block.split()
                    if token.strip(".,;:'\"()").startswith(TOP_LEVEL)]
    missing = []
    for token in [token for span in spans for token in span.split()] + block_tokens:
        token = token.split("=")[-1] if token.startswith("--") else token  # --flag=path
        for expanded in _expand_braces(token):
            path = _candidate(expanded)
            if path is not None and not _exists(path):
                missing.append(f"{relative}: `{token}`")
                break
    return missing


def anchors(relative):
    """The `#anchors` of a markdown file's headings, as GitHub spells them."""
    text = _FENCE.sub("", _read(relative))
    slugs = set()
    for heading in _HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        slugs.add(slug)
    return slugs


def missing_links(relative):
    """Relative markdown links (`[text](path#anchor)`) of a doc whose target does not exist."""
    missing = []
    for target in _LINK.findall(_read(relative)):
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(ROOT, os.path.dirname(relative), file_part))
        if not os.path.exists(path):
            missing.append(f"{relative}: ({target})")
        elif anchor and path.endswith(".md") and anchor not in anchors(os.path.relpath(path, ROOT)):
            missing.append(f"{relative}: ({target}) names no heading")
    return missing


def test_workspace_is_a_short_guide():
    lines = _read("WORKSPACE.md").count("\n")
    assert lines <= MAX_WORKSPACE_LINES, (
        f"WORKSPACE.md has {lines} lines (at most {MAX_WORKSPACE_LINES}): move decisions to "
        "docs/design.md and measurements to a dated docs/lab/ file")


def test_design_is_a_reference_not_a_history():
    lines = _read("docs/design.md").count("\n")
    assert lines <= MAX_DESIGN_LINES, (
        f"docs/design.md has {lines} lines (at most {MAX_DESIGN_LINES}): state each decision as "
        "the code makes it now, with its figure; the story of a measurement goes in docs/lab/")


def test_readme_is_short():
    lines = _read("README.md").count("\n")
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines (at most {MAX_README_LINES}): reference belongs on the "
        "job pages in docs/")


def test_the_docs_split_by_audience_exists():
    for relative in ["docs/design.md", "CHANGELOG.md", "benchmarks/README.md",
                     "docs/pretraining.md", "docs/fine_tuning.md", "docs/serving.md",
                     "docs/checkpoints.md", "docs/operations.md"]:
        assert os.path.isfile(os.path.join(ROOT, relative)), relative
    assert glob.glob(os.path.join(ROOT, "docs", "lab", "*.md"))


def test_every_relative_link_exists():
    missing = [entry for relative in LINKED for entry in missing_links(relative)]
    assert not missing, "links to missing files:\n" + "\n".join(missing)


def test_every_backticked_repository_path_exists():
    missing = [entry for relative in GUIDES for entry in missing_code_paths(relative)]
    assert not missing, "paths that do not exist (moved or renamed?):\n" + "\n".join(missing)


def test_no_doc_or_docstring_points_outside_the_repository():
    # The project's notes outside the repository (design contract, style guide, anchors) are
    # not shipped with it: docs/design.md is where a reason lives.
    outside = re.compile(r"\.\./shared/|/work/|\b(?:DESIGN|PERFORMANCE|ANCHORS|STYLE)\.md\b")
    offenders = []
    files = LINKED + [os.path.relpath(path, ROOT) for folder in ["bert_tf", "tools",
                                                                 "benchmarks", "dev", "tests"]
                      for path in glob.glob(os.path.join(ROOT, folder, "**", "*.py"),
                                            recursive=True)]
    for relative in files:
        for number, line in enumerate(_read(relative).splitlines(), 1):
            if outside.search(line) and relative != os.path.relpath(__file__, ROOT):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "pointers outside the repository:\n" + "\n".join(offenders)


def test_measured_figures_are_not_copied():
    # A copied figure goes stale when the benchmark is rerun: pages link to its row instead.
    copies = [relative for relative in GUIDES + ["CHANGELOG.md"]
              if DEMO_FIGURE in _read(relative) and relative not in DEMO_FIGURE_HOMES]
    assert not copies, (f"the demo's {DEMO_FIGURE} is copied into {copies}: link to "
                        "benchmarks/README.md instead")


# History is named by date, version or commit: a round of work ("stop" and its number) means
# nothing to a reader of the repository.
_WORK_ROUND = re.compile(r"\bstops? ?-?\d+", re.IGNORECASE)
_SCANNED = ("bert_tf", "tools", "benchmarks", "dev", "docs", "tests", "official_configs")


def test_no_file_names_history_by_work_round():
    paths = [os.path.join(ROOT, name) for name in os.listdir(ROOT)
             if os.path.isfile(os.path.join(ROOT, name))]
    for folder in _SCANNED:
        for parent, _, names in os.walk(os.path.join(ROOT, folder)):
            paths += [os.path.join(parent, name) for name in names]
    offenders = []
    for path in paths:
        relative = os.path.relpath(path, ROOT)
        if "__pycache__" in relative or relative.endswith((".pyc", ".png")):
            continue
        if _WORK_ROUND.search(os.path.basename(path).replace("_", " ")):
            offenders.append(f"{relative}: the file name")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        offenders += [f"{relative}:{text.count(chr(10), 0, match.start()) + 1}: {match.group()}"
                      for match in _WORK_ROUND.finditer(text)]
    assert not offenders, "name a date, version or commit instead:\n" + "\n".join(offenders)
