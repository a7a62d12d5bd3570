"""The error compiled CPU code raises for an index out of range (gathers, scatters and
``passes.kernel.Position`` reads). It is raised with its numbers only: formatting a message in
compiled code compiles numba's string functions in every new process (1.5 s). No numba here:
a process that loads compiled code from the disk cache imports this without numba."""
from __future__ import annotations


class OutOfBounds(IndexError):
    """Raised by compiled code with the numbers only; builds NumPy's own ``IndexError``.

    >>> OutOfBounds(5, 0, 3)
    IndexError('index 5 is out of bounds for axis 0 with size 3')
    """

    def __new__(cls, *numbers: int | IndexError) -> IndexError:  # type: ignore[misc]
        # Raised while another exception is handled, CPython builds the error at once and
        # then, finding an IndexError rather than an OutOfBounds, calls the class again with
        # that error as its one argument: it is the error already built.
        if len(numbers) == 1 and isinstance(numbers[0], IndexError):
            return numbers[0]
        index, axis, size = numbers
        return IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
