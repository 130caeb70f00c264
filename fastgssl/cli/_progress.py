"""The progress of ``fastgssl select`` on stderr (tqdm bars with an ETA and the search's
own lines); stdout stays for the report."""

from __future__ import annotations

import contextlib
import io
import re
import sys

import numpy as np
from tqdm import tqdm


class _Progress:
    """The job's progress on stderr: tqdm bars with an ETA (level >= 1) and, at level >= 2,
    the search's own progress lines. stdout stays for the report."""

    _DONE = re.compile(r"^\[GridSearchCV\] (\d+)/(\d+)\b")
    _VERIFY = re.compile(r"^\[GridSearchCV\] verify (\d+):")

    def __init__(self, level, stream=None):
        self.level = int(level)
        self.stream = stream if stream is not None else sys.stderr

    def bar(self, desc, total, unit):
        return tqdm(total=total, desc=desc, unit=unit, file=self.stream,
                    disable=self.level < 1, leave=True, mininterval=0.5, dynamic_ncols=True)

    @contextlib.contextmanager
    def search(self, desc, total):
        """A bar over the candidates of a search; the search's lines (printed on stdout)
        move the bar and are echoed to stderr at level >= 2, never left on stdout."""
        with self.bar(desc, total, "candidate") as bar:
            sink = _LineSink(lambda line: self._line(bar, line))
            with contextlib.redirect_stdout(sink):
                yield bar
            sink.flush()
            if bar.n < total:
                bar.update(total - bar.n)

    def candidates(self, title, search):
        """At level >= 2: one line per candidate of a fitted search (criterion, verified)."""
        if self.level < 2:
            return
        res = search.cv_results_
        errors = np.asarray(res["mean_cv_error"], dtype=float)
        verified = res.get("verified", np.zeros(len(errors), dtype=bool))
        order = np.argsort(errors, kind="stable")
        print(f"{title}: {len(order)} candidates, best first", file=self.stream)
        for rank, i in enumerate(order, 1):
            params = ", ".join(f"{k}={v:.4g}" for k, v in res["params"][i].items())
            flag = " (verified by exact CV)" if verified[i] else ""
            print(f"  {rank:3d}. {params}: CV {errors[i]:.4g}{flag}", file=self.stream)

    def _line(self, bar, line):
        done = self._DONE.match(line)
        verify = self._VERIFY.match(line)
        if done:
            bar.update(max(0, int(done.group(1)) - bar.n))
        elif verify:
            bar.set_postfix_str(f"{verify.group(1)} verified by exact CV", refresh=True)
        if self.level >= 2 or not (done or verify or line.startswith("[GridSearchCV]")):
            bar.write(line, file=self.stream)


class _LineSink(io.TextIOBase):
    """A text stream that hands each complete line to a callback."""

    def __init__(self, callback):
        self._callback = callback
        self._buffer = ""

    def writable(self):
        return True

    def write(self, text):
        self._buffer += text
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            if line.strip():
                self._callback(line)
        return len(text)

    def flush(self):
        if self._buffer.strip():
            self._callback(self._buffer)
        self._buffer = ""
