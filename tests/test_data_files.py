"""Data files read by their format (fastgssl.datasets._files): LIBSVM, delimited tables
with one label column, numeric tables with a labels file beside them, ARFF and the MNIST
idx pair; any other file refused naming the formats (issue 43)."""

import gzip

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastgssl.datasets import load_libsvm
from fastgssl.datasets._files import ACCEPTED_FORMATS, load_data_file, sniff_format


def _write(path, text, gz=False):
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


@given(rows=st.integers(2, 30), cols=st.integers(1, 6), data=st.data(),
       sep=st.sampled_from([",", " ", "\t"]), gz=st.booleans(), header=st.booleans())
def test_a_table_with_one_text_column_reads_that_column_as_the_label(tmp_path_factory, rows,
                                                                     cols, data, sep, gz,
                                                                     header):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    X = np.round(rng.normal(size=(rows, cols)) * 10.0 ** rng.integers(-3, 4, size=cols), 6)
    y = rng.choice(["R", "M", "g"], size=rows)
    j = data.draw(st.integers(0, cols))  # where the label column sits
    lines = []
    if header:
        lines.append(sep.join(f"col{c}" for c in range(cols + 1)))
    for i in range(rows):
        fields = [repr(float(v)) for v in X[i]]
        fields.insert(j, str(y[i]))
        lines.append(sep.join(fields))
    path = _write(tmp_path_factory.mktemp("t") / ("t.data.gz" if gz else "t.data"),
                  "\n".join(lines) + "\n", gz)
    assert sniff_format(path) == "table"
    X_got, y_got, what = load_data_file(path)
    np.testing.assert_array_equal(X_got, X)
    np.testing.assert_array_equal(y_got, y)
    assert f"column {j + 1}" in what and f"of {cols + 1}" in what
    if header:
        assert f"(col{j})" in what


def test_a_numeric_table_takes_its_labels_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.integers(400, 600, size=(12, 7)).astype(float)
    y = rng.choice([-1.0, 1.0], size=12)
    np.savetxt(tmp_path / "m_train.data", X, fmt="%d")
    _write(tmp_path / "m_train.labels.gz", "\n".join(f"{v:g}" for v in y) + "\n", gz=True)
    X_got, y_got, what = load_data_file(tmp_path / "m_train.data")
    np.testing.assert_array_equal(X_got, X)
    np.testing.assert_array_equal(y_got, y)
    assert "m_train.labels" in what
    # the labels file alone is refused, naming its features file
    with pytest.raises(ValueError, match="labels file without features; its features are in "
                                         "m_train.data"):
        load_data_file(tmp_path / "m_train.labels.gz")
    # a numeric table without a labels file: no label column can be told apart
    np.savetxt(tmp_path / "alone.csv", X, delimiter=",")
    with pytest.raises(ValueError, match="all 7 columns are numbers") as info:
        load_data_file(tmp_path / "alone.csv")
    assert ACCEPTED_FORMATS in str(info.value)
    # fewer labels than rows
    _write(tmp_path / "short.labels", "1\n-1\n")
    np.savetxt(tmp_path / "short.data", X)
    with pytest.raises(ValueError, match="12 rows but short.labels holds 2 labels"):
        load_data_file(tmp_path / "short.data")


def test_arff_target_is_the_class_attribute_else_the_last(tmp_path):
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(9, 3)), 4)
    t = np.round(rng.uniform(5, 30, size=9), 1)
    head = "% a comment\n@relation 'r'\n@attribute a real\n@attribute class real\n" \
           "@attribute b real\n@attribute c real\n@data\n"
    rows = [f"{X[i, 0]},{t[i]},{X[i, 1]},{X[i, 2]}" for i in range(9)]
    _write(tmp_path / "r.arff.gz", head + "\n".join(rows) + "\n", gz=True)
    X_got, y_got, what = load_data_file(tmp_path / "r.arff.gz")
    np.testing.assert_array_equal(X_got, X)
    np.testing.assert_array_equal(y_got, t)
    assert "'class'" in what
    nominal = "@relation r\n@attribute a real\n@attribute kind {x,y}\n@data\n" + \
        "\n".join(f"{X[i, 0]},{'xy'[i % 2]}" for i in range(9)) + "\n"
    X_got, y_got, what = load_data_file(_write(tmp_path / "n.arff", nominal))
    np.testing.assert_array_equal(X_got[:, 0], X[:, 0])
    assert list(y_got) == ["xy"[i % 2] for i in range(9)] and "'kind'" in what
    mixed = nominal.replace("@attribute a real\n", "@attribute a {p,q}\n@attribute z real\n")
    mixed = mixed.split("@data\n")[0] + "@data\n" + "\n".join(
        f"p,1.0,{'xy'[i % 2]}" for i in range(9)) + "\n"
    with pytest.raises(ValueError, match="attributes a are not numeric"):
        load_data_file(_write(tmp_path / "m.arff", mixed))


def test_idx_pair_reads_from_either_file(tmp_path):
    rng = np.random.default_rng(2)
    images = rng.integers(0, 256, size=(5, 4, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, size=5, dtype=np.uint8)
    with gzip.open(tmp_path / "t-images-idx3-ubyte.gz", "wb") as fh:
        fh.write(b"\x00\x00\x08\x03" + (5).to_bytes(4, "big") + (4).to_bytes(4, "big")
                 + (3).to_bytes(4, "big") + images.tobytes())
    with gzip.open(tmp_path / "t-labels-idx1-ubyte.gz", "wb") as fh:
        fh.write(b"\x00\x00\x08\x01" + (5).to_bytes(4, "big") + labels.tobytes())
    for name in ("t-images-idx3-ubyte.gz", "t-labels-idx1-ubyte.gz"):
        X, y, _ = load_data_file(tmp_path / name)
        np.testing.assert_allclose(X, images.reshape(5, 12) / 255.0)
        np.testing.assert_array_equal(y, labels)
    (tmp_path / "t-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(ValueError, match="labels file is not beside it"):
        load_data_file(tmp_path / "t-images-idx3-ubyte.gz")


@pytest.mark.parametrize("text, why", [
    ("B,1,x,1\nL,2,y,2\n", "columns 1, 3 of 4 are not numbers"),
    ("1,2,3\n4,5\n", "its rows have 3 and 2 fields"),
    ("just some words here\nand more of them\n", "columns 1, 2, 3, 4 of 4"),
    ("\x00\x01binary", "not a data file of a known format"),
])
def test_other_files_are_refused_naming_the_accepted_formats(tmp_path, text, why):
    path = _write(tmp_path / "bad.txt", text)
    with pytest.raises(ValueError) as info:
        load_data_file(path)
    message = str(info.value)
    assert why in message and message.startswith("bad.txt: ")
    assert ACCEPTED_FORMATS in message


def test_libsvm_reads_as_load_svmlight_file_and_refuses_other_formats(tmp_path):
    from sklearn.datasets import load_svmlight_file

    text = "1 1:0.5 3:2\n-1 2:1.5\n1\n"  # the third row: all features 0
    path = _write(tmp_path / "s.txt", text)
    X, y, what = load_data_file(path, n_features=4)
    X_ref, y_ref = load_svmlight_file(str(path), n_features=4)
    np.testing.assert_array_equal(X, X_ref.toarray())
    np.testing.assert_array_equal(y, y_ref)
    assert what == "LIBSVM"
    csv = _write(tmp_path / "c.data", "B,1,1\nR,1,2\n")
    with pytest.raises(ValueError, match="a delimited table, not LIBSVM: load_libsvm reads "
                                         "LIBSVM only") as info:
        load_libsvm(csv)
    assert "could not convert" not in str(info.value)


@pytest.mark.datasets
def test_every_file_of_the_shared_folder_loads_or_is_refused_by_its_format(datasets_dir):
    """PROVENANCE.md's sizes, each file named as the command line's --dataset names it."""
    from fastgssl.datasets import load_data_file as load_named

    sizes = {"balance-scale.data": (625, 4), "ionosphere.data": (351, 34),
             "sonar.all-data": (208, 60), "letter-recognition.data": (20000, 16),
             "madelon_train.data": (2000, 500), "madelon_valid.data": (600, 500),
             "bodyfat.arff": (252, 14), "t10k-images-idx3-ubyte": (10000, 784),
             "t10k-labels-idx1-ubyte": (10000, 784), "a1a": (1605, 123),
             "abalone": (4177, 8), "madelon.t": (600, 500)}
    for path in sorted(datasets_dir.glob("*.gz")):
        name = path.name.removesuffix(".gz")
        if name.endswith(".labels"):
            with pytest.raises(ValueError, match="labels file without features"):
                load_named(name)
            continue
        X, y, description = load_named(name)
        assert X.shape[0] == len(y) and description.startswith(f"{name} (")
        if name in sizes:
            assert X.shape == sizes[name], name
    X, y, description = load_named("balance-scale.data")
    assert sorted(np.unique(y)) == ["B", "L", "R"]
    assert description == "balance-scale.data (table, label: column 1 of 5)"


# ------------------------------------------------------------------ issue 51: damaged files
def _refused(path, why, named=None):
    with pytest.raises(ValueError) as info:
        load_data_file(path)
    message = str(info.value)  # names the damaged file (given, or its idx sibling)
    assert message.startswith(f"{named or path.name}: ") and why in message, message
    assert ACCEPTED_FORMATS in message


def test_damaged_gzip_files_are_refused(tmp_path):
    rng = np.random.default_rng(3)
    text = "".join(f"{i % 2} 1:{rng.normal():.4f} 2:{rng.normal():.4f}\n" for i in range(400))
    raw = gzip.compress(text.encode())
    (tmp_path / "cut.gz").write_bytes(raw[:len(raw) // 2])  # EOFError
    (tmp_path / "junk.gz").write_bytes(b"\x1f\x8b" + rng.bytes(200))  # BadGzipFile
    (tmp_path / "flip.gz").write_bytes(raw[:40] + bytes(b ^ 0xFF for b in raw[40:80])
                                       + raw[80:])  # zlib.error
    for name in ("cut.gz", "junk.gz", "flip.gz"):
        _refused(tmp_path / name, "a gzip file that does not decompress")


ARFF_HEAD = "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute class {x,y}\n" \
            "@data\n"


def test_damaged_arff_files_are_refused(tmp_path):
    rows = "".join(f"{i}.5,{i},{'xy'[i % 2]}\n" for i in range(10))
    _refused(_write(tmp_path / "cut.arff", ARFF_HEAD + rows + "3.5\n"),
             "a data row of fewer values than its attributes")
    _refused(_write(tmp_path / "only.arff",
                    "@relation r\n@attribute class {x,y}\n@data\nx\ny\nx\n"),
             "an ARFF file without features: its only attribute is the target, 'class'")


def _idx(path, magic, dims, body):
    path.write_bytes(magic + b"".join(int(v).to_bytes(4, "big") for v in dims) + body)
    return path


def test_damaged_idx_pairs_are_refused(tmp_path):
    img, lab = b"\x00\x00\x08\x03", b"\x00\x00\x08\x01"
    pixels = np.arange(20, dtype=np.uint8).tobytes()
    _idx(tmp_path / "a-images-idx3-ubyte", img, (5, 2, 2), pixels)
    _idx(tmp_path / "a-labels-idx1-ubyte", lab, (4,), bytes([0, 1, 0, 1]))
    _refused(tmp_path / "a-images-idx3-ubyte",
             "5 images but its labels file a-labels-idx1-ubyte holds 4 labels")
    # a header announcing more than the file holds (pixels or labels)
    _idx(tmp_path / "b-images-idx3-ubyte", img, (50, 28, 28), pixels)
    _idx(tmp_path / "b-labels-idx1-ubyte", lab, (50,), bytes(5))
    _refused(tmp_path / "b-labels-idx1-ubyte",
             "header announces 50 x 28 x 28 (39,200 bytes after its 16-byte header) but "
             "which holds 20", named="b-images-idx3-ubyte")
    _idx(tmp_path / "b-images-idx3-ubyte", img, (5, 2, 2), pixels)
    _refused(tmp_path / "b-images-idx3-ubyte", "an idx labels file whose header announces 50",
             named="b-labels-idx1-ubyte")
    # a header whose product overflows 64 bits
    _idx(tmp_path / "b-images-idx3-ubyte", img, (2**32 - 1,) * 3, pixels)
    _refused(tmp_path / "b-images-idx3-ubyte", f"({(2**32 - 1) ** 3:,} bytes after its",
             named="b-images-idx3-ubyte")


def test_libsvm_index_beyond_memory_is_refused(tmp_path):
    path = _write(tmp_path / "wide.libsvm", "0 1:1 2000000000:1\n1 1:2\n")
    import fastgssl.datasets._files as files

    # a fixed budget, so the test does not depend on the machine's memory
    check = files.check_dense_memory
    files.check_dense_memory = lambda *a, **k: check(*a, **k, available=2**30)
    try:
        _refused(path, "largest feature index, 2,000,000,000, asks for a dense 2 x "
                       "2,000,000,000 matrix of 29.8 GiB, more than the 1.0 GiB available")
    finally:
        files.check_dense_memory = check


def test_the_command_line_prints_the_refusal(tmp_path, capsys):
    from fastgssl.cli import main

    (tmp_path / "cut.gz").write_bytes(gzip.compress(b"0 1:1\n1 1:2\n" * 50)[:30])
    assert main(["select", "--dataset", str(tmp_path / "cut.gz"), "--quick", "--json"]) == 1
    err = capsys.readouterr().err
    assert "cut.gz: a gzip file that does not decompress" in err and "Traceback" not in err
