"""Pictures: boards as SVG (or PNG with matplotlib) with overlays, boards
as text, training curves from any `metrics.jsonl`, ablation plots."""

from alphago_jax.viz.ablation import plot_ablation
from alphago_jax.viz.board import (BoardPicture, board_png, board_svg,
                                   go_columns, move_numbers)
from alphago_jax.viz.curves import (latest_records, numeric_fields,
                                    plot_metrics)
from alphago_jax.viz.text import board_text

__all__ = ["BoardPicture", "board_png", "board_svg", "board_text",
           "go_columns", "latest_records", "move_numbers", "numeric_fields",
           "plot_ablation", "plot_metrics"]
