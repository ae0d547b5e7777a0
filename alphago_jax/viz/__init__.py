"""Pictures: boards as SVG (or PNG with matplotlib) with overlays, and
training curves from any `metrics.jsonl`, ablation plots."""

from alphago_jax.viz.ablation import plot_ablation
from alphago_jax.viz.board import (BoardPicture, board_png, board_svg,
                                   go_columns, move_numbers)
from alphago_jax.viz.curves import (latest_records, numeric_fields,
                                    plot_metrics)

__all__ = ["BoardPicture", "board_png", "board_svg", "go_columns",
           "latest_records", "move_numbers", "numeric_fields",
           "plot_ablation", "plot_metrics"]
