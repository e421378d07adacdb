"""A plausible initial tree for a path-addressed env (a small software project).

`generate_state` fills entities with independent random records; a file tree needs records
that agree with each other (every path's parent is a directory of the tree, names look like
files people keep). An entity is a tree when it is keyed by `path` and has a `kind` enum with
"file" and "directory" (the state `forgec.synth.shape_tree` declares); its records are then
this project, rooted at the `root` global's default. Deterministic per rng: which optional
folders and files exist and the words inside the files vary with the seed.
"""

from __future__ import annotations

import random

WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "falcon", "granite", "harbor", "iris", "juniper")

# (relative path, content template or None for a directory, kept with probability)
LAYOUT = (
    ("README.md", "# {Name}\n\nA small tool that parses {w1} records and writes a {w2} report.\n\n## Usage\n\n    python src/main.py data/input.csv\n", 1.0),
    ("notes.txt", "TODO: rename the {w1} module\nTODO: add tests for {w2}\nmeeting on friday\n", 1.0),
    (".gitignore", "__pycache__/\n*.log\nbuild/\n", 0.8),
    ("src", None, 1.0),
    ("src/main.py", "import sys\n\nfrom utils import load\n\n\ndef main(path):\n    rows = load(path)\n    print(len(rows), \"rows\")\n\n\nif __name__ == \"__main__\":\n    main(sys.argv[1])\n", 1.0),
    ("src/utils.py", "def load(path):\n    with open(path) as f:\n        return [line.split(\",\") for line in f]\n", 1.0),
    ("src/config.json", "{{\n  \"name\": \"{w1}\",\n  \"debug\": false,\n  \"retries\": 3\n}}\n", 0.8),
    ("docs", None, 1.0),
    ("docs/guide.md", "# Guide\n\nInstall the package, then run the {w1} command.\n", 1.0),
    ("docs/changelog.md", "## 1.1.0\n- faster {w2} parsing\n\n## 1.0.0\n- first release\n", 0.7),
    ("data", None, 1.0),
    ("data/input.csv", "id,name,score\n1,{w1},42\n2,{w2},17\n3,{w3},99\n", 1.0),
    ("data/report.txt", "Report for {w1}\nrows: 3\nmean score: 52.67\n", 0.8),
    ("tests", None, 0.9),
    ("tests/test_main.py", "from src.utils import load\n\n\ndef test_load(tmp_path):\n    p = tmp_path / \"a.csv\"\n    p.write_text(\"1,a\\n\")\n    assert load(p) == [[\"1\", \"a\\n\"]]\n", 1.0),
    ("archive", None, 1.0),
    ("build", None, 0.8),
    ("logs", None, 0.6),
    ("logs/app.log", "INFO start\nWARN slow {w1} query\nINFO done\n", 1.0),
)


def fill_trees(schema: dict, out: dict, seed: int) -> None:
    """Replace the random records of a tree entity (and of its files' checkpoints) in `out`."""
    ents = schema.get("entities") or {}
    root = ((schema.get("globals") or {}).get("root") or {}).get("default") or "/project"
    now = ((schema.get("globals") or {}).get("now") or {}).get("default") or ""
    for e, d in ents.items():
        if not is_tree_entity(d):
            continue
        rng = random.Random(f"forgec-tree:{seed}")
        out[e] = tree_records(str(root), d["fields"], rng)
        files = [p for p, r in out[e].items() if r["kind"] == "file"]
        for c, cd in ents.items():  # saved states of files (checkpoints): a few files have an older one
            ids = [f for f in cd.get("fields", {}) if f.endswith("id") and f != cd.get("key")]
            if c != e and {"path", "content"} <= set(cd.get("fields", {})) and ids and cd.get("key") != "path":
                recs = {}
                for p in sorted(rng.sample(files, min(3, len(files)))):
                    k = f"{p}@checkpoint"
                    r = {f: None for f in cd["fields"]}
                    older = "".join(out[e][p]["content"].splitlines(keepends=True)[:-1])  # the file before its last line
                    r.update({cd["key"]: k, ids[0]: "checkpoint", "path": p, "content": older})
                    if "last_modified" in r:
                        r["last_modified"] = now
                    recs[k] = r
                out[c] = recs


def is_tree_entity(d: dict) -> bool:
    kind = d.get("fields", {}).get("kind", {})
    return d.get("key") == "path" and kind.get("type") == "enum" and {"file", "directory"} <= set(kind.get("values", ()))


def tree_records(root: str, fields: dict, rng: random.Random) -> dict[str, dict]:
    """The tree's records by path (the root directory included), sorted by path."""
    w = rng.sample(WORDS, 3)
    fill = {"w1": w[0], "w2": w[1], "w3": w[2], "Name": w[0].capitalize()}
    out: dict[str, dict] = {}
    dropped: set[str] = set()

    def rec(path: str, kind: str, content: str) -> dict:
        r = {f: None for f in fields}
        r.update({"path": path, "kind": kind})
        if "content" in fields:
            r["content"] = content
        return r

    out[root] = rec(root, "directory", "")
    for rel, tpl, p in LAYOUT:
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if parent in dropped or rng.random() >= p:
            dropped.add(rel)
            continue
        path = root.rstrip("/") + "/" + rel
        out[path] = rec(path, "directory" if tpl is None else "file", "" if tpl is None else tpl.format(**fill))
    return {k: out[k] for k in sorted(out)}
