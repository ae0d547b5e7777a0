"""The --devices flag of the benchmarks that split their games over XLA CPU
devices (`uct_tictactoe.py`, `selfplay.py`)."""

from alphago_jax.core import cpu_devices


def parse_with_devices(p, *, default, help_text):
  """Adds --devices (XLA CPU devices, `default` if not given) to the parser
  `p`, parses the command line and gives the process that many devices, as
  it must before JAX starts (the first JAX operation fixes them); a bad
  count is a usage error. Returns the parsed arguments."""
  p.add_argument("--devices", type=int, default=default, help=help_text)
  args = p.parse_args()
  try:
    cpu_devices.use_cpu_devices(args.devices)
  except ValueError as e:
    p.error(f"--devices: {e}")
  return args
