"""rcqa: layer-wise attributions for extractive question answering."""
