"""A minimal HDF5 reader for the tests, over the libhdf5 C library that tcsolve itself links
(ctypes: H5Fopen, H5Dopen2, H5Dread, H5Aread): reads whole datasets and scalar attributes of the
files the CLI reads and writes (docs/architecture.md, "HDF5 files") as NumPy arrays, exactly (the
library converts to the native type asked for; float64 and float32 data come back bit for bit).
h5py is not needed, and nothing of HDF5 is vendored.
"""

import ctypes
import ctypes.util

import numpy as np

hid_t = ctypes.c_int64
herr_t = ctypes.c_int
hsize_t = ctypes.c_ulonglong
H5F_ACC_RDONLY = 0
H5P_DEFAULT = 0
H5S_ALL = 0

_NATIVE = {np.dtype(np.float64): "H5T_NATIVE_DOUBLE_g", np.dtype(np.float32): "H5T_NATIVE_FLOAT_g",
           np.dtype(np.int32): "H5T_NATIVE_INT_g", np.dtype(np.int64): "H5T_NATIVE_LLONG_g"}


class Hdf5:
    """The C library, loaded from ``path`` (or found by name: hdf5_serial, hdf5)."""

    def __init__(self, path=None):
        path = path or ctypes.util.find_library("hdf5_serial") or ctypes.util.find_library("hdf5")
        if not path:
            raise RuntimeError("hdf5_reader: libhdf5 not found (pass its path)")
        lib = self.lib = ctypes.CDLL(path)
        lib.H5open.restype = herr_t
        lib.H5open()
        lib.H5Eset_auto2.argtypes = [hid_t, ctypes.c_void_p, ctypes.c_void_p]
        lib.H5Eset_auto2(0, None, None)  # no error stack printed: failures are raised here
        for name, res, args in [
            ("H5Fopen", hid_t, [ctypes.c_char_p, ctypes.c_uint, hid_t]),
            ("H5Fclose", herr_t, [hid_t]),
            ("H5Lexists", ctypes.c_int, [hid_t, ctypes.c_char_p, hid_t]),
            ("H5Dopen2", hid_t, [hid_t, ctypes.c_char_p, hid_t]),
            ("H5Dclose", herr_t, [hid_t]),
            ("H5Dget_space", hid_t, [hid_t]),
            ("H5Sget_simple_extent_ndims", ctypes.c_int, [hid_t]),
            ("H5Sget_simple_extent_dims", ctypes.c_int, [hid_t, ctypes.POINTER(hsize_t), ctypes.POINTER(hsize_t)]),
            ("H5Sclose", herr_t, [hid_t]),
            ("H5Dread", herr_t, [hid_t, hid_t, hid_t, hid_t, hid_t, ctypes.c_void_p]),
            ("H5Aexists", ctypes.c_int, [hid_t, ctypes.c_char_p]),
            ("H5Aopen", hid_t, [hid_t, ctypes.c_char_p, hid_t]),
            ("H5Aread", herr_t, [hid_t, hid_t, ctypes.c_void_p]),
            ("H5Aclose", herr_t, [hid_t]),
        ]:
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args

    def _native(self, dtype):
        return hid_t.in_dll(self.lib, _NATIVE[np.dtype(dtype)]).value

    def read(self, path, dataset, dtype=np.float64):
        """Dataset ``dataset`` of file ``path`` as a C-ordered NumPy array of ``dtype`` (None when
        the file has no such dataset)."""
        lib = self.lib
        f = lib.H5Fopen(str(path).encode(), H5F_ACC_RDONLY, H5P_DEFAULT)
        if f < 0:
            raise OSError(f"hdf5_reader: cannot open {path}")
        try:
            if lib.H5Lexists(f, dataset.encode(), H5P_DEFAULT) <= 0:
                return None
            d = lib.H5Dopen2(f, dataset.encode(), H5P_DEFAULT)
            try:
                space = lib.H5Dget_space(d)
                rank = lib.H5Sget_simple_extent_ndims(space)
                dims = (hsize_t * max(1, rank))()
                lib.H5Sget_simple_extent_dims(space, dims, None)
                lib.H5Sclose(space)
                out = np.empty(tuple(dims[i] for i in range(rank)), dtype=dtype)
                if lib.H5Dread(d, self._native(dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.ctypes.data) < 0:
                    raise OSError(f"hdf5_reader: cannot read {path}:{dataset}")
                return out
            finally:
                lib.H5Dclose(d)
        finally:
            lib.H5Fclose(f)

    def attribute(self, path, name, dtype=np.float64):
        """The scalar attribute ``name`` of the file's root group."""
        lib = self.lib
        f = lib.H5Fopen(str(path).encode(), H5F_ACC_RDONLY, H5P_DEFAULT)
        if f < 0:
            raise OSError(f"hdf5_reader: cannot open {path}")
        try:
            a = lib.H5Aopen(f, name.encode(), H5P_DEFAULT)
            if a < 0:
                raise KeyError(f"{path}: no attribute {name}")
            try:
                out = np.empty((), dtype=dtype)
                if lib.H5Aread(a, self._native(dtype), out.ctypes.data) < 0:
                    raise OSError(f"hdf5_reader: cannot read attribute {name} of {path}")
                return out[()]
            finally:
                lib.H5Aclose(a)
        finally:
            lib.H5Fclose(f)


def main(argv=None):
    """python3 hdf5_reader.py FILE DATASET OUT.npy [--library LIBHDF5]: one dataset as float64
    .npy (gpu_checks.py runs this in a child process whose library path holds a bundle's
    libhdf5 and its dependencies, so that they never enter the process running torch)."""
    import argparse
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("file")
    parser.add_argument("dataset")
    parser.add_argument("out")
    parser.add_argument("--library")
    args = parser.parse_args(argv)
    data = Hdf5(args.library).read(args.file, args.dataset)
    if data is None:
        raise SystemExit(f"hdf5_reader: {args.file} has no dataset {args.dataset}")
    np.save(args.out, data)


if __name__ == "__main__":
    main()
