"""jurist's one C module (src/jurist/tokens/_o200k.c): o200k ranks held compactly, pieces merged in C."""

from collections.abc import Callable, Sequence

ABI_VERSION: int

class Ranks:
    """A ``.tiktoken`` file's ranks (every rank its line number), and counts merged from them."""

    def __init__(self, ranks_file: bytes, long_piece: int, long_count: Callable[[bytes], int]) -> None: ...
    def count(self, pieces: Sequence[str]) -> int:
        """Tokens of the pieces (str, cut by the encoding's pattern), summed."""
    def scan(self, text: str, at: int) -> tuple[int, int]:
        """(tokens, stop): the ASCII pieces of ``text`` from ``at`` (a piece's start) counted, up to the
        first piece whose end depends on a character outside ASCII, or the text's end."""
    def merged(self, data: bytes) -> int:
        """Tokens of one piece's bytes."""
    def rank(self, token: bytes) -> int | None:
        """The rank of a token's bytes, or None."""
    def __len__(self) -> int: ...
