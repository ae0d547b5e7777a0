"""A GTP client: drives an external Go engine (GNU Go, our own engine, any
GTP program) over pipes.

`GTPClient` speaks the Go Text Protocol (version 2) to a subprocess: each
command goes out as `<id> <command>`, each answer comes back as `=<id> text`
(success) or `?<id> text` (failure), ended by an empty line. The ids are
checked, so a lost or stray answer is caught at once rather than shifting
every later answer by one.

Errors:

* `GTPError`: the engine answered `?` (unknown command, illegal move, ...).
  The engine is still usable.
* `GTPConnectionError`: the engine died, answered something that is not GTP,
  or (`GTPTimeout`) did not answer in time. The engine is unusable after it.
"""

from __future__ import annotations

import collections
import queue
import re
import subprocess
import threading
import time
from typing import Iterable, Optional, Sequence, Set, Union

import numpy as np

from alphago_jax.games.vertex import normalize_vertex

_COLOURS = {"b": "black", "black": "black", "w": "white", "white": "white",
            0: "black", 1: "white"}

Colour = Union[str, int]


class GTPError(Exception):
  """The engine answered a command with a GTP failure (`? message`)."""

  def __init__(self, command: str, message: str):
    super().__init__(f"GTP command {command!r} failed: {message}")
    self.command = command
    self.message = message


class GTPConnectionError(RuntimeError):
  """The engine died, broke the protocol, or did not answer."""


class GTPTimeout(GTPConnectionError):
  """The engine did not answer within the timeout."""


def colour_name(colour: Colour) -> str:
  """`"black"` / `"white"` for `b`, `black`, `w`, `white` (any case) or a
  player number (0 Black, 1 White)."""
  key = colour.lower() if isinstance(colour, str) else colour
  if isinstance(key, (bool, np.bool_)) or key not in _COLOURS:
    raise ValueError(f"gtp: unknown colour {colour!r} (expected 'b', 'w', "
                     f"'black', 'white', 0 or 1)")
  return _COLOURS[key]


class GTPClient:
  """A GTP engine in a subprocess. Use as a context manager.

  Args:
    command: argv of the engine, e.g. `["gnugo", "--mode", "gtp"]`.
    timeout: default seconds to wait for each answer (None: forever).
    cwd: working directory of the engine.
  """

  def __init__(self, command: Sequence[str], *, timeout: Optional[float] = 60.0,
               cwd: Optional[str] = None):
    if isinstance(command, str) or not command:
      raise ValueError(f"gtp: command must be a non-empty argv list, got "
                       f"{command!r}")
    self.command = [str(c) for c in command]
    self.timeout = timeout
    self._next_id = 1
    self._broken: Optional[str] = None
    self._lines: queue.Queue = queue.Queue()
    self._stderr = collections.deque(maxlen=50)
    try:
      self._proc = subprocess.Popen(
          self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
          stderr=subprocess.PIPE, text=True, encoding="utf-8",
          errors="replace", bufsize=1, cwd=cwd)
    except OSError as e:
      raise GTPConnectionError(f"gtp: cannot start {self.command!r}: {e}") from e
    # Reader threads: a queue gives `send` a timeout on any platform, and
    # draining stderr keeps a chatty engine from blocking on a full pipe.
    threading.Thread(target=self._pump_stdout, daemon=True).start()
    threading.Thread(target=self._pump_stderr, daemon=True).start()

  def _pump_stdout(self):
    for line in self._proc.stdout:
      self._lines.put(line)
    self._lines.put(None)  # EOF: the engine exited.

  def _pump_stderr(self):
    for line in self._proc.stderr:
      self._stderr.append(line.rstrip("\n"))

  # -- Protocol -------------------------------------------------------------

  @property
  def alive(self) -> bool:
    return self._proc.poll() is None

  @property
  def returncode(self) -> Optional[int]:
    """The engine's exit status, None while it runs."""
    return self._proc.poll()

  @property
  def stderr_tail(self) -> list[str]:
    """The engine's last 50 lines of stderr (its log)."""
    return list(self._stderr)

  def _dead(self, what: str) -> GTPConnectionError:
    try:
      rc = self._proc.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
      rc = None
    tail = "\n".join(self._stderr) or "(no stderr)"
    self._broken = f"the engine exited (status {rc})"
    return GTPConnectionError(
        f"gtp: engine {self.command[0]!r} exited (status {rc}) {what}; "
        f"stderr:\n{tail}")

  def send(self, command: str, timeout: Optional[float] = ...) -> str:
    """Sends one command; returns the answer text (`= text` -> `text`).

    Raises:
      GTPError: the engine answered `? message`.
      GTPTimeout: no answer within `timeout` (default: the engine's).
      GTPConnectionError: the engine died or the answer is not GTP.
      ValueError: `command` is empty or spans several lines.
    """
    return self.send_many([command], timeout=timeout)[0]

  def send_many(self, commands: Iterable[str],
                timeout: Optional[float] = ...) -> list[str]:
    """Sends several commands at once (pipelined), then reads their answers.

    Saves one round trip per command. All answers are read before the first
    failure, if any, is raised as `GTPError`, so the stream stays in step.
    `timeout` bounds the whole batch.
    """
    commands = list(commands)
    for c in commands:
      if not isinstance(c, str) or not c.strip() or any(
          ch in c for ch in "\r\n"):
        raise ValueError(f"gtp: a command must be one non-empty line, got "
                         f"{c!r}")
    if self._broken:
      raise GTPConnectionError(f"gtp: engine {self.command[0]!r} is unusable: "
                               f"{self._broken}")
    timeout = self.timeout if timeout is ... else timeout
    deadline = None if timeout is None else time.monotonic() + timeout
    ids = list(range(self._next_id, self._next_id + len(commands)))
    self._next_id += len(commands)
    try:
      self._proc.stdin.write("".join(
          f"{i} {c.strip()}\n" for i, c in zip(ids, commands)))
      self._proc.stdin.flush()
    except (BrokenPipeError, OSError, ValueError):
      raise self._dead(f"before {commands[0]!r} could be sent") from None
    answers = [self._read_answer(i, c, deadline)
               for i, c in zip(ids, commands)]
    for c, (ok, text) in zip(commands, answers):
      if not ok:
        raise GTPError(c.strip(), text)
    return [text for _, text in answers]

  def _read_line(self, command: str, deadline: Optional[float]) -> str:
    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
    try:
      line = self._lines.get(timeout=wait)
    except queue.Empty:
      self._broken = f"no answer to {command!r} in time"
      raise GTPTimeout(f"gtp: engine {self.command[0]!r} did not answer "
                       f"{command!r} in time") from None
    if line is None:
      self._lines.put(None)  # Later reads see the EOF too.
      raise self._dead(f"while answering {command!r}")
    # GTP: CR is ignored and tabs count as spaces.
    return line.rstrip("\n").replace("\r", "").replace("\t", " ")

  def _read_answer(self, cid: int, command: str,
                   deadline: Optional[float]) -> tuple[bool, str]:
    line = self._read_line(command, deadline)
    while not line.strip():  # Stray blank lines before an answer.
      line = self._read_line(command, deadline)
    m = re.fullmatch(r"([=?])([0-9]*)(?: (.*))?", line.strip())
    if not m:
      self._broken = f"malformed answer {line!r} to {command!r}"
      raise GTPConnectionError(f"gtp: malformed answer {line!r} to "
                               f"{command!r} (expected '= ...' or '? ...')")
    # An engine that drops ids is tolerated; a wrong id means lost step.
    if m.group(2) not in ("", str(cid)):
      self._broken = f"answer id {m.group(2)!r} for command id {cid}"
      raise GTPConnectionError(
          f"gtp: answer {line!r} carries id {m.group(2)!r}, expected {cid} "
          f"for {command!r}; the engine is out of step")
    body = [m.group(3) or ""]
    line = self._read_line(command, deadline)
    while line.strip():  # The answer ends with an empty line.
      body.append(line)
      line = self._read_line(command, deadline)
    return m.group(1) == "=", "\n".join(body).strip()

  # -- Lifecycle ------------------------------------------------------------

  def close(self, timeout: float = 2.0) -> None:
    """Asks the engine to quit, then terminates or kills it if it lingers.
    Never hangs and never raises; safe to call twice."""
    if self.alive and not self._broken:
      try:
        self.send("quit", timeout=timeout)
      except (GTPError, GTPConnectionError):
        pass
    self._broken = self._broken or "closed"
    for pipe in (self._proc.stdin,):
      try:
        pipe.close()
      except (OSError, ValueError):
        pass
    try:
      self._proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
      self._proc.terminate()
      try:
        self._proc.wait(timeout=timeout)
      except subprocess.TimeoutExpired:
        self._proc.kill()
        self._proc.wait()

  quit = close

  def __enter__(self) -> "GTPClient":
    return self

  def __exit__(self, *exc) -> None:
    self.close()

  def __del__(self):
    proc = getattr(self, "_proc", None)
    if proc is not None and proc.poll() is None:
      proc.kill()

  # -- Commands -------------------------------------------------------------

  def name(self) -> str:
    return self.send("name")

  def version(self) -> str:
    return self.send("version")

  def boardsize(self, size: int) -> None:
    self.send(f"boardsize {int(size)}")

  def clear_board(self) -> None:
    self.send("clear_board")

  def komi(self, komi: float) -> None:
    self.send(f"komi {float(komi)}")

  def play(self, colour: Colour, vertex: str) -> None:
    """Plays `vertex` (or `pass`) for `colour`; GTPError if illegal."""
    self.send(f"play {colour_name(colour)} {normalize_vertex(vertex)}")

  def genmove(self, colour: Colour) -> str:
    """The engine's move for `colour`, played on its board: an upper-case
    vertex, `"PASS"` or `"RESIGN"`."""
    c = f"genmove {colour_name(colour)}"
    answer = self.send(c).strip().upper()
    if answer != "RESIGN":
      try:
        answer = normalize_vertex(answer)
      except ValueError:
        raise GTPConnectionError(f"gtp: {c!r} answered {answer!r}, not a "
                                 f"vertex") from None
    return answer

  def _vertices(self, command: str) -> Set[str]:
    answer = self.send(command)
    try:
      return {normalize_vertex(v) for v in answer.split()}
    except ValueError:
      raise GTPConnectionError(f"gtp: {command!r} answered {answer!r}, not a "
                               f"list of vertices") from None

  def list_stones(self, colour: Colour) -> Set[str]:
    """The vertices of `colour`'s stones."""
    return self._vertices(f"list_stones {colour_name(colour)}")

  def all_legal(self, colour: Colour) -> Set[str]:
    """The points where `colour` may play (GNU Go extension; no `PASS`)."""
    return self._vertices(f"all_legal {colour_name(colour)}")

  def is_legal(self, colour: Colour, vertex: str) -> bool:
    """Whether `colour` may play `vertex` (GNU Go extension)."""
    c = f"is_legal {colour_name(colour)} {normalize_vertex(vertex)}"
    answer = self.send(c)
    if answer not in ("0", "1"):
      raise GTPConnectionError(f"gtp: {c!r} answered {answer!r}, not 0 or 1")
    return answer == "1"

  def final_score(self) -> str:
    """The engine's score of the game, e.g. `"B+3.5"`, `"W+0.5"` or `"0"`
    (GNU Go estimates dead stones; not Tromp-Taylor)."""
    return self.send("final_score")
