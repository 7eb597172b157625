"""How the simulator's tensors and values print: as CuTeDSL 4.8.1 prints them.

- `print(tensor)` (trace time): `tensor<ptr<f32, generic> o (4,3):(3,1)>`, the address space `generic` for a
  tensor made by from_dlpack, `align<16>` when more than the element's alignment is known;
  `tensor.type`: `!cute.memref<f16, generic, align<16>, "(64,512):(512,1)">`;
- a TensorSSA: `tensor_value<vector<12xf32> o (3, 4)>`;
- `cute.print_tensor(tensor)` (run time): the pointer, the layout with its run-time values and the data, the
  first two modes as rows and columns, the modes after them as a list of such matrices, a mode longer than 6
  shown as its first 3 and last 3 entries around `...`:

      tensor(raw_ptr(0x000055d74b3efbf0: f32, generic, align<4>) o (2,3):(3,1), data=
             [[ 0.000000,  1.000000,  2.000000, ],
              [ 3.000000,  4.000000,  5.000000, ]])

  and with verbose=True one line per element, `(i,j)= value`, in column-major order.
"""
from __future__ import annotations

import math

import numpy

from ...cute.inttuple import flatten, fmt_coord, idx2crd, is_tuple, product
from ...cute.layout import Layout

_SPACES = {"gmem": "generic", "smem": "smem", "rmem": "rmem"}
_EDGE = 3           # entries shown at each end of a long mode
_LONGEST = 6        # modes up to this long are shown whole
_INDENT = " " * len("tensor(")


def _dtype_name(tensor) -> str:
    element_type = tensor.element_type
    if element_type is None:
        return str(tensor.storage.array.dtype)
    return "i8" if element_type.mlir_type == "i1" else element_type.mlir_type


def _alignment(tensor) -> int:
    """The alignment CuTeDSL knows of the tensor's start, in bytes."""
    storage = tensor.storage
    if storage.space == "rmem":
        return 32
    return storage.align_bytes or storage.bytes_per_element


def _known_alignment(tensor) -> str:
    """`, align<16>` when more than one element's alignment is known (CuTeDSL leaves the default out)."""
    align = _alignment(tensor)
    return f", align<{align}>" if tensor.storage.space == "rmem" or align > tensor.storage.bytes_per_element else ""


def _layout_text(tensor) -> str:
    return f"{tensor.swizzle} o {tensor.base} o {tensor.layout}" if tensor.swizzle is not None else str(tensor.layout)


def tensor_text(tensor) -> str:
    """str(tensor) of a simulator tensor."""
    return f"tensor<ptr<{_dtype_name(tensor)}, {_SPACES[tensor.storage.space]}{_known_alignment(tensor)}> o " \
           f"{_layout_text(tensor)}>"


def tensor_type_text(tensor) -> str:
    """tensor.type of a simulator tensor."""
    return f'!cute.memref<{_dtype_name(tensor)}, {_SPACES[tensor.storage.space]}{_known_alignment(tensor)}, ' \
           f'"{_layout_text(tensor)}">'


def value_text(value) -> str:
    """str(tensor_ssa)."""
    shape = value.shape if is_tuple(value.shape) else (value.shape,)
    count = math.prod(product(s) for s in shape)
    return f"tensor_value<vector<{count}x{value.element_type.mlir_type}> o {_python_tuple(shape)}>"


def _python_tuple(shape) -> str:
    return repr(tuple(_plain(s) for s in shape)) if is_tuple(shape) else str(_plain(shape))


def _plain(x):
    if is_tuple(x):
        return tuple(_plain(p) for p in x)
    return int(x) if isinstance(x, int) else x


def _run_time(x) -> str:
    """An int-tuple with its run-time values (what print_tensor shows)."""
    if is_tuple(x):
        return "(" + ",".join(_run_time(p) for p in x) + ")"
    return str(int(x)) if isinstance(x, int) and not isinstance(x, bool) else str(x)


def _layout_run_time(layout) -> str:
    if isinstance(layout, Layout):
        return f"{_run_time(layout.shape)}:{_run_time(layout.stride)}"
    return str(layout)


def _element(value, integer: bool) -> str:
    if isinstance(value, tuple):
        return " " + fmt_coord(value)
    if integer:
        return "% d" % int(value)
    return "% f" % float(value)


def _shown(extent: int) -> list:
    """The entries of a mode print_tensor shows, None standing for `...`."""
    if extent <= _LONGEST:
        return list(range(extent))
    return list(range(_EDGE)) + [None] + list(range(extent - _EDGE, extent))


def print_tensor_text(header: str, shape, value_at, integer: bool, verbose: bool = False) -> str:
    """The text of cute.print_tensor: `header` is `raw_ptr(...) o layout`, `value_at(index)` the element at a
    column-major index of `shape`."""
    modes = tuple(shape) if is_tuple(shape) else (shape,)
    extents = [product(m) for m in modes]
    total = math.prod(extents)
    if verbose:
        lines = [f"tensor({header}, data= ("]
        for index in range(total):
            coord = idx2crd(index, shape)
            lines.append(f"\t{fmt_coord(coord) if is_tuple(coord) else '(%d)' % coord}={_element(value_at(index), integer)}")
        return "\n".join(lines) + "\n)"
    text = f"tensor({header}, data=\n" + _INDENT
    if len(extents) == 1:
        rows = []
        for i in _shown(extents[0]):
            rows.append("..." if i is None else f"[{_element(value_at(i), integer)}, ]")
        return text + _join(rows, _INDENT) + ")"
    rows_extent, cols_extent = extents[0], extents[1]
    rest = math.prod(extents[2:])

    def matrix(k, indent):
        rows = []
        for i in _shown(rows_extent):
            if i is None:
                rows.append("...")
                continue
            cells = ["..." if j is None else _element(value_at(i + rows_extent * (j + cols_extent * k)), integer)
                     for j in _shown(cols_extent)]
            rows.append("[" + "".join(c + ", " for c in cells) + "]")
        return "[" + _join(rows, indent + " ") + "]"

    if len(extents) == 2:
        return text + matrix(0, _INDENT) + ")"
    slices = ["..." if k is None else matrix(k, _INDENT + " ") for k in _shown(rest)]
    out = []
    for n, piece in enumerate(slices):
        if n:
            out.append(",\n\n" + _INDENT + " " if slices[n - 1] != "..." else "\n\n" + _INDENT + " ")
        out.append(piece)
    return text + "[" + "".join(out) + "])"


def _join(rows: list, indent: str) -> str:
    """Rows joined as CuTe prints them: `,` after a row, none after `...`, each new line indented."""
    out = []
    for n, row in enumerate(rows):
        if n:
            out.append(("\n" if rows[n - 1] == "..." else ",\n") + indent)
        out.append(row)
    return "".join(out)


def raw_pointer(array: numpy.ndarray, base, dtype_name: str, space: str, align: int) -> str:
    address = array.ctypes.data + int(base) * array.itemsize
    return f"raw_ptr(0x{address:016x}: {dtype_name}, {space}, align<{align}>)"


def tensor_data_text(tensor, verbose: bool = False) -> str:
    """cute.print_tensor(tensor) of a simulator tensor."""
    addresses = tensor.addresses()
    values = tensor.storage.array[addresses]
    header = raw_pointer(tensor.storage.array, tensor.base, _dtype_name(tensor), _SPACES[tensor.storage.space],
                         _alignment(tensor)) + " o " + _layout_run_time(tensor.layout)
    integer = values.dtype.kind in "iub"
    return print_tensor_text(header, tensor.layout.shape, values.__getitem__, integer, verbose)


def coordinate_data_text(tensor, verbose: bool = False) -> str:
    """cute.print_tensor(identity tensor): its coordinates."""
    layout = tensor.layout
    header = f"{fmt_coord(tensor.iterator) if is_tuple(tensor.iterator) else tensor.iterator} o {layout}"
    total = product(flatten(layout.shape))

    def at(index):
        value = tensor[idx2crd(index, layout.shape)] if total else None
        return tuple(_plain(value)) if is_tuple(value) else value
    return print_tensor_text(header, layout.shape, at, False, verbose)


def value_data_text(value, verbose: bool = False) -> str:
    """cute.print_tensor(tensor_ssa): the value as CuTeDSL materializes it, in registers with a compact
    column-major layout."""
    from ...cute.layout import make_layout
    shape = value.shape if is_tuple(value.shape) else (value.shape,)
    layout = make_layout(shape)
    values = numpy.ascontiguousarray(value.values)
    header = raw_pointer(values, 0, value.element_type.mlir_type if value.element_type.mlir_type != "i1" else "i8",
                         "rmem", 32) + " o " + _layout_run_time(layout)
    return print_tensor_text(header, shape, values.__getitem__, values.dtype.kind in "iub", verbose)
