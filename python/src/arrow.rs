//! Arrow in and out through the Arrow C data interface, by the PyCapsule
//! protocol (`__arrow_c_array__`): any producer (pyarrow, Polars, DuckDB,
//! nanoarrow, ...) hands over its buffers without a copy, and the result is
//! handed back the same way.
//!
//! The structs and their import/export are the `arrow-array`/`arrow-data`/
//! `arrow-schema` crates' (`ffi` feature): the Arrow project's own Rust
//! implementation, kept in step with the specification, with `from_ffi`
//! wrapping the producer's buffers (no copy; only under-aligned buffers are
//! realigned) and `to_ffi` exporting ours. What is here is the capsule
//! handling around them.

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef, GenericStringArray, Int64Array, OffsetSizeTrait};
use arrow_buffer::{Buffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

use crate::{Output, Shared, Worker};

const SCHEMA_NAME: &CStr = c"arrow_schema";
const ARRAY_NAME: &CStr = c"arrow_array";

/// Imports the array `obj` exports with `__arrow_c_array__`, without
/// copying its buffers.
fn import(obj: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    if !obj.hasattr("__arrow_c_array__")? {
        return Err(PyTypeError::new_err(format!(
            "expected an Arrow array (an object with __arrow_c_array__, such as pyarrow.Array), \
             not {}",
            obj.get_type().name()?
        )));
    }
    let pair = obj.call_method0("__arrow_c_array__")?;
    let pair = pair.cast::<PyTuple>()?;
    let schema = pair.get_item(0)?.cast_into::<PyCapsule>()?;
    let array = pair.get_item(1)?.cast_into::<PyCapsule>()?;
    let schema_ptr = schema
        .pointer_checked(Some(SCHEMA_NAME))?
        .cast::<FFI_ArrowSchema>();
    let array_ptr = array
        .pointer_checked(Some(ARRAY_NAME))?
        .cast::<FFI_ArrowArray>();
    // SAFETY: `pointer_checked` returned the non-null pointer of a capsule
    // named "arrow_array", which by the PyCapsule protocol points to an
    // initialized, aligned `struct ArrowArray` that the consumer may move
    // out. `from_raw` moves it, leaving a released struct (release = NULL)
    // that the capsule's destructor then ignores, so it is released once,
    // when the buffers we import are dropped.
    let ffi_array = unsafe { FFI_ArrowArray::from_raw(array_ptr.as_ptr()) };
    // SAFETY: the capsule named "arrow_schema" points to an initialized
    // `struct ArrowSchema` that the capsule owns and releases; we only read
    // it, while `schema` (the capsule) is alive in this scope.
    let ffi_schema = unsafe { schema_ptr.as_ref() };
    // SAFETY: the producer of an Arrow capsule promises that the array
    // agrees with the C data interface and with the schema it gave.
    let data = unsafe { from_ffi(ffi_array, ffi_schema) }
        .map_err(|e| PyValueError::new_err(format!("cannot import the Arrow array: {e}")))?;
    Ok(make_array(data))
}

/// Calls `f` with each value of a string or binary array, `None` for a null.
fn each(input: &dyn Array, mut f: impl FnMut(Option<&[u8]>)) -> Result<(), String> {
    macro_rules! run {
        ($a:expr) => {{
            let a = $a;
            for i in 0..a.len() {
                if a.is_null(i) {
                    f(None)
                } else {
                    let v: &[u8] = a.value(i).as_ref();
                    f(Some(v))
                }
            }
        }};
    }
    match input.data_type() {
        DataType::Utf8 => run!(input.as_string::<i32>()),
        DataType::LargeUtf8 => run!(input.as_string::<i64>()),
        DataType::Utf8View => run!(input.as_string_view()),
        DataType::Binary => run!(input.as_binary::<i32>()),
        DataType::LargeBinary => run!(input.as_binary::<i64>()),
        DataType::BinaryView => run!(input.as_binary_view()),
        other => {
            return Err(format!(
                "expected an Arrow array of string, large_string, string_view, binary, \
                 large_binary or binary_view, not {other} (cast it first)"
            ))
        }
    }
    Ok(())
}

/// A string array from `values` cut at `offsets`; arrow checks the UTF-8
/// (canonical URLs are ASCII) and the offsets.
fn strings<O: OffsetSizeTrait>(
    offsets: Vec<O>,
    values: Vec<u8>,
    nulls: NullBufferBuilder,
) -> Result<ArrayRef, String> {
    let mut nulls = nulls;
    let array = GenericStringArray::<O>::try_new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Buffer::from_vec(values),
        nulls.finish(),
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(array))
}

/// The output array for `input`: strings (or, for fingerprints, int64),
/// null where the input is null or rejected. `string` unless the input has
/// 64-bit offsets or the output outgrows 32-bit ones (`large_string`).
pub fn compute(w: &mut Worker, input: &dyn Array, what: Output) -> Result<ArrayRef, String> {
    let n = input.len();
    let mut nulls = NullBufferBuilder::new(n);
    if what.is_number() {
        let mut values = Vec::with_capacity(n);
        each(input, |v| match v.and_then(|b| w.number(b, what).ok()) {
            Some(k) => {
                values.push(k);
                nulls.append_non_null();
            }
            None => {
                values.push(0);
                nulls.append_null();
            }
        })?;
        return Ok(Arc::new(Int64Array::new(values.into(), nulls.finish())));
    }
    let mut values: Vec<u8> = Vec::new();
    let mut offsets: Vec<i64> = Vec::with_capacity(n + 1);
    offsets.push(0);
    each(input, |v| {
        match v.and_then(|b| w.text(b, what).ok()) {
            Some(t) => {
                values.extend_from_slice(t);
                nulls.append_non_null();
            }
            None => nulls.append_null(),
        }
        offsets.push(values.len() as i64);
    })?;
    let large = matches!(
        input.data_type(),
        DataType::LargeUtf8 | DataType::LargeBinary
    );
    if !large && values.len() <= i32::MAX as usize {
        strings(offsets.iter().map(|&o| o as i32).collect(), values, nulls)
    } else {
        strings(offsets, values, nulls)
    }
}

/// Canonicalizes an Arrow array, without the GIL while it runs.
pub fn canonicalize(shared: &Shared, obj: &Bound<'_, PyAny>, what: Output) -> PyResult<ArrowArray> {
    let input = import(obj)?;
    let py = obj.py();
    let out = py.detach(|| shared.with_worker(|w| compute(w, input.as_ref(), what)));
    out.map(|array| ArrowArray { array })
        .map_err(PyTypeError::new_err)
}

/// An Arrow array made by canonurl, exported with `__arrow_c_array__`
/// (`pyarrow.array(it)`, `polars.Series(it)`, ...).
#[pyclass(frozen, module = "canonurl", name = "ArrowArray")]
pub struct ArrowArray {
    array: ArrayRef,
}

#[pymethods]
impl ArrowArray {
    /// The PyCapsule protocol: `(schema capsule, array capsule)`. Each call
    /// exports the same buffers again (shared, not copied). A requested
    /// schema is not applied.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let (array, schema) = to_ffi(&self.array.to_data())
            .map_err(|e| PyValueError::new_err(format!("cannot export the Arrow array: {e}")))?;
        // Each capsule owns its struct; the destructor drops it, which
        // releases it unless the consumer moved it out (release = NULL).
        let schema = PyCapsule::new_with_value(py, schema, SCHEMA_NAME)?;
        let array = PyCapsule::new_with_value(py, array, ARRAY_NAME)?;
        PyTuple::new(py, [schema, array])
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }

    /// The number of nulls (rejected or null inputs).
    #[getter]
    fn null_count(&self) -> usize {
        self.array.null_count()
    }

    /// The Arrow type: `string`, `large_string` or `int64`.
    #[getter]
    fn type_name(&self) -> String {
        self.array.data_type().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "ArrowArray({}, len={}, nulls={})",
            self.array.data_type(),
            self.array.len(),
            self.array.null_count()
        )
    }
}

/// For the tests: the address of the data buffer of an Arrow array as
/// imported, to check that the import copies nothing (it must equal the
/// producer's buffer address).
#[pyfunction]
pub fn _import_address(array: &Bound<'_, PyAny>) -> PyResult<usize> {
    let a = import(array)?;
    let data = a.to_data();
    let buffers = data.buffers();
    // Strings and binaries: offsets (or views) first, then the data.
    let i = usize::from(buffers.len() > 1);
    Ok(buffers.get(i).map_or(0, |b| b.as_ptr() as usize))
}
