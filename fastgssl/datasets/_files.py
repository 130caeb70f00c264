"""Data files of known formats: which format a file is in, read off its first bytes, and
its ``(X, y)``.

The shared datasets folder (``PROVENANCE.md``) holds LIBSVM files and, beside them, the UCI
and Weka originals of some of them. :func:`load_data_file` reads all of these:

- **LIBSVM**: ``label index:value ...`` per line (:func:`sklearn.datasets.load_svmlight_file`);
- **a delimited table** (comma- or whitespace-separated, the UCI ``.data`` files) with
  exactly one non-numeric column, the label (``B,1,1,1,1``: the first column; ionosphere's
  ``g`` / ``b``: the last); a header line of names is skipped;
- **a numeric table with a labels file beside it**: ``name.data`` and ``name.labels`` (one
  label per line, as UCI's ``madelon_train.data`` / ``madelon_train.labels``);
- **Weka ARFF** (:func:`scipy.io.arff.loadarff`): the target is the attribute named
  ``class``, else the last one (Weka's convention); the other attributes must be numeric;
- **MNIST idx**: an ``...-images-idx3-ubyte`` file and its ``...-labels-idx1-ubyte``
  sibling, pixels scaled to [0, 1].

Any other file is refused with a :class:`ValueError` naming these formats and quoting the
start of the file, never with a parser's own error; so is a damaged one (a gzip stream that
does not decompress, an ARFF row cut short, idx files whose headers disagree with their
contents or with each other, a LIBSVM feature index that asks for a dense matrix beyond the
available memory).
"""

from __future__ import annotations

import gzip
import io
import math
import zlib
from pathlib import Path

import numpy as np

from fastgssl._memory import InsufficientMemoryError, check_dense_memory

__all__ = ["ACCEPTED_FORMATS", "load_data_file", "sniff_format"]

ACCEPTED_FORMATS = (
    "LIBSVM ('label index:value ...' per line); a comma- or whitespace-separated table "
    "with exactly one non-numeric column, the label (as UCI's .data files); a numeric table "
    "with a labels file beside it (name.data and name.labels, one label per line); Weka "
    "ARFF (the target: the attribute named 'class', else the last); the MNIST idx files "
    "(...-images-idx3-ubyte with its ...-labels-idx1-ubyte)"
)

_SNIFF_LINES = 20
_IDX_IMAGES = b"\x00\x00\x08\x03"
_IDX_LABELS = b"\x00\x00\x08\x01"
# what a damaged gzip stream raises while it is read
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def _open(path, mode="rb"):
    path = Path(path)
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(path, mode) if mode == "rb" else \
            io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, mode) if mode == "rb" else \
        open(path, encoding="utf-8", errors="replace")


def _head(path):
    """The first bytes and the first non-empty lines of a (gzipped) file."""
    with _open(path) as fh:
        raw = fh.read(1 << 16)
    text = raw.decode("utf-8", errors="replace")
    if len(raw) == 1 << 16:  # the last line may be cut short
        text = text.rsplit("\n", 1)[0]
    return raw, [ln.strip() for ln in text.splitlines() if ln.strip()]


def _is_number(token):
    try:
        float(token)
    except ValueError:
        return False
    return True


def _fields(line):
    return [f.strip() for f in line.split(",")] if "," in line else line.split()


def sniff_format(path):
    """The format of the file at ``path``: ``"libsvm"``, ``"table"``, ``"arff"``,
    ``"idx-images"``, ``"idx-labels"`` or ``"labels"`` (one value per line), or None."""
    raw, lines = _head(path)
    if raw[:4] == _IDX_IMAGES:
        return "idx-images"
    if raw[:4] == _IDX_LABELS:
        return "idx-labels"
    if b"\x00" in raw[:1024] or not lines:
        return None
    data = [ln for ln in lines if not ln.startswith("%")]
    if data and data[0].lower().startswith("@relation"):
        return "arff"
    data = [ln for ln in data if not ln.startswith("#")][:_SNIFF_LINES]
    if not data:
        return None
    tokens = [ln.split() for ln in data]
    if all(len(t) == 1 and "," not in t[0] for t in tokens):
        return "labels"
    # LIBSVM: "label index:value ..." (a line may hold the label alone: an all-zero row)
    if all(":" in v for t in tokens for v in t[1:]) and any(len(t) > 1 for t in tokens):
        return "libsvm"
    widths = {len(_fields(ln)) for ln in data[1:]} or {len(_fields(data[0]))}
    if len(widths) == 1 and widths.pop() > 1:
        return "table"
    return None


def _refuse(path, why, quote=True):
    try:
        _, lines = _head(path) if quote and Path(path).is_file() else (b"", [])
    except _GZIP_ERRORS:
        lines = []
    start = lines[0] if lines else ""
    start = start if len(start) <= 60 else start[:57] + "..."
    quoted = f" (it starts: {start!r})" if start else ""
    return ValueError(f"{Path(path).name}: {why}{quoted}. Accepted formats: "
                      f"{ACCEPTED_FORMATS}.")


def _sibling(path, old, new):
    """``path`` with ``old`` replaced by ``new`` in its name, gzipped or not, if it exists."""
    name = Path(path).name
    if old not in name:
        return None
    stem = name.replace(old, new)
    for cand in (stem, stem.removesuffix(".gz"), stem.removesuffix(".gz") + ".gz"):
        p = Path(path).with_name(cand)
        if p.is_file():
            return p
    return None


def _labels_beside(path):
    """``name.labels`` (or ``.labels.gz``) beside ``name.data`` (or ``name.data.gz``)."""
    name = Path(path).name.removesuffix(".gz")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    for cand in (f"{stem}.labels", f"{stem}.labels.gz"):
        p = Path(path).with_name(cand)
        if p.is_file():
            return p
    return None


def _read_table(path):
    """``(X, y, what)`` of a delimited table with one non-numeric column."""
    with _open(path, "rt") as fh:
        rows = [_fields(ln) for ln in (s.strip() for s in fh) if ln and not ln.startswith("#")]
    header = None
    if len(rows) > 1 and not any(_is_number(v) for v in rows[0]) and \
            any(_is_number(v) for v in rows[1]):
        header, rows = rows[0], rows[1:]
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        bad = next(i for i, r in enumerate(rows) if len(r) != len(rows[0]))
        raise _refuse(path, f"its rows have {len(rows[0])} and {len(rows[bad])} fields "
                            f"(data row {bad + 1}): not one table")
    table = np.array(rows, dtype=object)
    numeric = np.array([all(_is_number(v) for v in table[:, j])
                        for j in range(table.shape[1])])
    text_cols = np.flatnonzero(~numeric)
    if text_cols.size == 0:
        labels = _labels_beside(path)
        if labels is None:
            raise _refuse(path, f"all {table.shape[1]} columns are numbers, so no label "
                                f"column can be told apart, and no labels file (name.labels) "
                                f"lies beside it")
        y = _read_labels(labels)
        if y.shape[0] != table.shape[0]:
            raise _refuse(path, f"{table.shape[0]} rows but {labels.name} holds "
                                f"{y.shape[0]} labels")
        return (table.astype(np.float64), y,
                f"numeric table, labels from {labels.name.removesuffix('.gz')}")
    if text_cols.size > 1:
        raise _refuse(path, f"columns {', '.join(str(j + 1) for j in text_cols)} of "
                            f"{table.shape[1]} are not numbers; exactly one (the label) may "
                            f"be (categorical features or missing values such as '?' are "
                            f"not read)")
    j = int(text_cols[0])
    y = table[:, j].astype(str)
    X = np.delete(table, j, axis=1).astype(np.float64)
    name = f" ({header[j]})" if header else ""
    return X, y, f"table, label: column {j + 1}{name} of {table.shape[1]}"


def _read_labels(path):
    with _open(path, "rt") as fh:
        values = [s.strip() for s in fh if s.strip()]
    if all(_is_number(v) for v in values):
        return np.array(values, dtype=np.float64)
    return np.array(values, dtype=str)


def _read_arff(path):
    from scipy.io import arff

    with _open(path, "rt") as fh:
        try:
            data, meta = arff.loadarff(fh)
        except (ValueError, NotImplementedError, arff.ParseArffError) as exc:
            raise _refuse(path, f"an ARFF file scipy cannot read ({exc})") from None
        except IndexError:  # scipy's row parser on a row of too few values
            raise _refuse(path, "an ARFF file with a data row of fewer values than its "
                                "attributes (cut short?)") from None
    names = meta.names()
    target = next((n for n in names if n.lower() == "class"), names[-1])
    others = [n for n in names if n != target]
    if not others:
        raise _refuse(path, f"an ARFF file without features: its only attribute is the "
                            f"target, {target!r}")
    nominal = [n for n in others if meta[n][0] != "numeric"]
    if nominal:
        raise _refuse(path, f"its attributes {', '.join(nominal)} are not numeric (only the "
                            f"target, {target!r}, may be nominal)")
    X = np.column_stack([np.asarray(data[n], dtype=np.float64) for n in others])
    y = data[target]
    y = (np.asarray(y, dtype=np.float64) if meta[target][0] == "numeric"
         else np.char.decode(np.asarray(y, dtype=bytes), "utf-8"))
    return X, y, f"ARFF, target: attribute {target!r}"


def _idx_body(path, header_bytes, what):
    """The header's dimensions and the bytes after it of an idx file, refused when the header
    announces another number of bytes than the file holds."""
    with _open(path) as fh:
        raw = fh.read()
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(header_bytes // 4 - 1)]
    body = raw[header_bytes:]
    size = math.prod(dims)  # Python integers: a lying header cannot overflow them
    if len(raw) < header_bytes or len(body) != size:
        shape = " x ".join(str(v) for v in dims)
        raise _refuse(path, f"an idx {what} file whose header announces {shape} "
                            f"({size:,} bytes after its {header_bytes}-byte "
                            f"header) but which holds {max(len(body), 0):,}: cut short or a "
                            f"damaged header", quote=False)
    return dims, body


def _read_idx(images, labels):
    (n, rows, cols), pixels = _idx_body(images, 16, "images")
    (n_labels,), codes = _idx_body(labels, 8, "labels")
    if n_labels != n:
        raise _refuse(images, f"{n:,} images but its labels file {labels.name} holds "
                              f"{n_labels:,} labels: not one idx pair", quote=False)
    X = np.frombuffer(pixels, dtype=np.uint8).reshape(n, rows * cols)
    y = np.frombuffer(codes, dtype=np.uint8)
    return X.astype(np.float64) / 255.0, y.astype(np.int64), \
        "MNIST idx, pixels scaled to [0, 1]"


def load_data_file(path, n_features=None):
    """``(X, y, what)`` of the file at ``path`` in any of the formats of this module's
    docstring: dense features, labels (numbers, or strings for a table's text column) and
    a short description of the format and of where the label came from.

    Raises
    ------
    ValueError
        For a file in none of these formats (naming them and quoting its start), a labels
        file alone, a table whose label column cannot be told apart, or a damaged file.
    """
    path = Path(path)
    try:
        return _load_data_file(path, n_features)
    except _GZIP_ERRORS as exc:
        raise _refuse(path, f"a gzip file that does not decompress, truncated or damaged "
                            f"({type(exc).__name__}: {exc})") from None


def _load_data_file(path, n_features):
    fmt = sniff_format(path)
    if fmt == "libsvm":
        from sklearn.datasets import load_svmlight_file

        try:
            X, y = load_svmlight_file(str(path), n_features=n_features)
        except ValueError as exc:
            raise _refuse(path, f"a LIBSVM-like file that does not parse ({exc})") from None
        if X.shape[1] == 0:
            raise _refuse(path, "a LIBSVM file without a single feature")
        try:
            check_dense_memory(X.shape[0], X.shape[1], what="its dense features")
        except InsufficientMemoryError as exc:
            raise _refuse(path, f"a LIBSVM file whose largest feature index, {X.shape[1]:,}, "
                                f"asks for a dense {X.shape[0]:,} x {X.shape[1]:,} matrix of "
                                f"{exc.required / 2**30:.1f} GiB, more than the "
                                f"{exc.available / 2**30:.1f} GiB available (a damaged index, "
                                f"or features too many to read dense)") from None
        return X.toarray(), y, "LIBSVM"
    if fmt == "table":
        return _read_table(path)
    if fmt == "arff":
        return _read_arff(path)
    if fmt in ("idx-images", "idx-labels"):
        images = path if fmt == "idx-images" else _sibling(path, "labels-idx1", "images-idx3")
        labels = path if fmt == "idx-labels" else _sibling(path, "images-idx3", "labels-idx1")
        if images is None or labels is None:
            raise _refuse(path, "an MNIST idx file whose "
                                + ("images" if images is None else "labels")
                                + " file is not beside it")
        return _read_idx(images, labels)
    if fmt == "labels":
        data = next((p for p in (_sibling(path, ".labels", ".data"),) if p is not None), None)
        hint = f"; its features are in {data.name.removesuffix('.gz')}" if data else ""
        raise _refuse(path, f"one value per line: a labels file without features{hint}")
    raw, lines = _head(path)
    if not lines:  # nothing but white space, or nothing at all
        raise _refuse(path, f"the file is empty ({'0 bytes' if not raw else 'only white space'})")
    raise _refuse(path, "not a data file of a known format")
