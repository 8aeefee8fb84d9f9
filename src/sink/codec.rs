//! The compact binary form of one job's table inside a part log, and the builders that stack
//! such tables over jobs into the assembled tables.
//!
//! Why not Parquet per job: a Parquet file carries a footer with its schema and per-column
//! metadata, which for a one-row, 47-column jobs table costs more than the data. Measured on tiny
//! jobs (D = 4, 200 iterations): Parquet per table took 690 us to encode and 260 us to decode
//! per job and 22 KB; this form takes a few microseconds and holds little more than the values.
//!
//! ```text
//! table   = rows: u32, schema_len: u32, schema, columns
//! schema  = n: u32, n x (name_len: u16, name: utf-8, kind: u8)
//! column  = 0 (plain), values | 1 (with nulls), validity bitmap, values
//!         | 2 (constant, no nulls), one value
//!         | 3 (byte planes, fixed width, no nulls), packed_len: u32, zstd(plane 0 .. plane w-1)
//! values  = fixed-width kinds: rows x little-endian value (0 where null)
//!           boolean: bitmap;  string: rows x (len: u32, utf-8);  null: nothing
//! bitmap  = ceil(rows / 8) bytes, bit i of byte i / 8 set when row i is valid / true
//! plane k = byte k of every value, in row order
//! ```
//!
//! The writer picks the smallest layout that applies, so a log never holds a large table twice
//! over: a column repeating one value (a chunk's `job_id`, `chain`) costs one value, and a large
//! fixed-width column (the field draws) is stored as compressed byte planes, which for posterior
//! draws is smaller than the assembled Parquet column (on a 128 x 128 grid, `bench/scale.sh`: a
//! results folder of 210 MB for 123 MB of tables, the part log being the difference). Layouts 2 and 3 arrived with
//! part logs of version 2; version 1 logs (layouts 0 and 1 only) read unchanged.
//!
//! The schema bytes come first and are compared by hash, so jobs with the same columns share one
//! interned [`TableSchema`]. The kinds are a closed list ([`Kind`]): a column of any other type is
//! refused with [`SinkError::UnsupportedColumn`] when the job is written, never silently cast.

use polars::prelude::{
    BooleanChunkedBuilder, ChunkedBuilder, Column, DataFrame, DataType, Float32Type, Float64Type,
    Int32Type, Int64Type, IntoColumn, IntoSeries, PlSmallStr, PrimitiveChunkedBuilder, Series,
    StringChunkedBuilder, UInt32Type, UInt64Type,
};

use std::borrow::Cow;

use super::error::SinkError;

/// The column types a part can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Null,
    Boolean,
    Int32,
    Int64,
    UInt32,
    UInt64,
    Float32,
    Float64,
    String,
}

impl Kind {
    const ALL: [Kind; 9] = [
        Kind::Null,
        Kind::Boolean,
        Kind::Int32,
        Kind::Int64,
        Kind::UInt32,
        Kind::UInt64,
        Kind::Float32,
        Kind::Float64,
        Kind::String,
    ];

    fn of(dtype: &DataType) -> Option<Kind> {
        Some(match dtype {
            DataType::Null => Kind::Null,
            DataType::Boolean => Kind::Boolean,
            DataType::Int32 => Kind::Int32,
            DataType::Int64 => Kind::Int64,
            DataType::UInt32 => Kind::UInt32,
            DataType::UInt64 => Kind::UInt64,
            DataType::Float32 => Kind::Float32,
            DataType::Float64 => Kind::Float64,
            DataType::String => Kind::String,
            _ => return None,
        })
    }

    pub(crate) fn dtype(self) -> DataType {
        match self {
            Kind::Null => DataType::Null,
            Kind::Boolean => DataType::Boolean,
            Kind::Int32 => DataType::Int32,
            Kind::Int64 => DataType::Int64,
            Kind::UInt32 => DataType::UInt32,
            Kind::UInt64 => DataType::UInt64,
            Kind::Float32 => DataType::Float32,
            Kind::Float64 => DataType::Float64,
            Kind::String => DataType::String,
        }
    }

    /// Bytes per value of a fixed-width kind (0 for the others).
    fn width(self) -> usize {
        match self {
            Kind::Int32 | Kind::UInt32 | Kind::Float32 => 4,
            Kind::Int64 | Kind::UInt64 | Kind::Float64 => 8,
            Kind::Null | Kind::Boolean | Kind::String => 0,
        }
    }

    fn code(self) -> u8 {
        Kind::ALL.iter().position(|k| *k == self).unwrap_or(0) as u8
    }

    fn from_code(code: u8) -> Option<Kind> {
        Kind::ALL.get(usize::from(code)).copied()
    }
}

/// The columns of one table of one job, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableSchema {
    pub(crate) columns: Vec<(String, Kind)>,
}

/// Appends the encoded `df` to `out`. `table` names the table in errors.
pub(crate) fn encode_table(
    table: &str,
    df: &DataFrame,
    out: &mut Vec<u8>,
) -> Result<(), SinkError> {
    let rows = u32::try_from(df.height()).map_err(|_| too_large(table))?;
    let mut kinds = Vec::with_capacity(df.width());
    for column in df.columns() {
        let kind = Kind::of(column.dtype()).ok_or_else(|| SinkError::UnsupportedColumn {
            table: table.to_string(),
            column: column.name().to_string(),
            dtype: column.dtype().to_string(),
        })?;
        kinds.push(kind);
    }
    out.extend_from_slice(&rows.to_le_bytes());
    let schema_len_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    let schema_start = out.len();
    out.extend_from_slice(&(df.width() as u32).to_le_bytes());
    for (column, kind) in df.columns().iter().zip(&kinds) {
        let name = column.name().as_bytes();
        let name_len = u16::try_from(name.len()).map_err(|_| too_large(table))?;
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(name);
        out.push(kind.code());
    }
    let schema_len = (out.len() - schema_start) as u32;
    out[schema_len_at..schema_start].copy_from_slice(&schema_len.to_le_bytes());
    for (column, kind) in df.columns().iter().zip(&kinds) {
        encode_column(column, *kind, out).map_err(|e| SinkError::Encode {
            table: table.to_string(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

fn too_large(table: &str) -> SinkError {
    SinkError::Encode {
        table: table.to_string(),
        message: "more than 2^32 rows or a column name over 65535 bytes".to_string(),
    }
}

fn push_bitmap(bits: impl Iterator<Item = bool>, rows: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + rows.div_ceil(8), 0);
    for (i, bit) in bits.enumerate() {
        if bit {
            out[start + i / 8] |= 1 << (i % 8);
        }
    }
}

/// How a column's values are laid out: the byte that starts each encoded column.
mod layout {
    /// Every value in turn, no nulls.
    pub(crate) const PLAIN: u8 = 0;
    /// A validity bitmap, then every value in turn (0 or empty where null).
    pub(crate) const WITH_NULLS: u8 = 1;
    /// No nulls, every row the same value: the value once.
    pub(crate) const CONSTANT: u8 = 2;
    /// A fixed-width column without nulls as byte planes (byte 0 of every value, then byte 1,
    /// ...), zstd-compressed: `compressed_len: u32, bytes`.
    pub(crate) const PLANES: u8 = 3;
}

/// Below this many value bytes a column is stored plain: compressing it gains too little.
const MIN_PLANES_BYTES: usize = 4096;
/// zstd's fastest level: field draws compress to about two thirds, at hundreds of MB/s.
const PLANES_LEVEL: i32 = 1;

macro_rules! encode_fixed {
    ($series:expr, $accessor:ident, $ty:ty, $out:expr) => {{
        let values = $series.$accessor()?;
        let rows = values.len();
        let width = std::mem::size_of::<$ty>();
        let mut bytes = Vec::with_capacity(rows * width);
        for value in values.iter() {
            bytes.extend_from_slice(&value.unwrap_or_default().to_le_bytes());
        }
        if values.null_count() > 0 {
            $out.push(layout::WITH_NULLS);
            push_bitmap(values.iter().map(|v| v.is_some()), rows, $out);
            $out.extend_from_slice(&bytes);
        } else {
            push_fixed_without_nulls(&bytes, width, $out);
        }
    }};
}

/// Stores the values `bytes` (`width` bytes each, none null) in the smallest of the layouts
/// that apply: constant, byte planes, plain.
fn push_fixed_without_nulls(bytes: &[u8], width: usize, out: &mut Vec<u8>) {
    let first = &bytes[..width.min(bytes.len())];
    if bytes.len() >= 2 * width && bytes.chunks_exact(width).all(|v| v == first) {
        out.push(layout::CONSTANT);
        out.extend_from_slice(first);
        return;
    }
    if bytes.len() >= MIN_PLANES_BYTES
        && let Some(packed) = compress_planes(bytes, width)
        && packed.len() + 4 < bytes.len()
        && let Ok(packed_len) = u32::try_from(packed.len())
    {
        out.push(layout::PLANES);
        out.extend_from_slice(&packed_len.to_le_bytes());
        out.extend_from_slice(&packed);
        return;
    }
    out.push(layout::PLAIN);
    out.extend_from_slice(bytes);
}

/// The byte planes of `bytes` (values of `width` bytes), zstd-compressed. Posterior draws
/// differ mostly in their low bytes: the sign and exponent planes compress to almost nothing.
fn compress_planes(bytes: &[u8], width: usize) -> Option<Vec<u8>> {
    let rows = bytes.len() / width;
    let mut planes = vec![0u8; bytes.len()];
    for (row, value) in bytes.chunks_exact(width).enumerate() {
        for (byte, &b) in value.iter().enumerate() {
            planes[byte * rows + row] = b;
        }
    }
    zstd::bulk::compress(&planes, PLANES_LEVEL).ok()
}

/// The inverse of [`compress_planes`]: exactly `rows` values of `width` bytes, or an error.
fn expand_planes(packed: &[u8], rows: usize, width: usize) -> Result<Vec<u8>, CorruptTable> {
    let planes = zstd::bulk::decompress(packed, rows * width)
        .map_err(|_| CorruptTable("byte planes do not decompress"))?;
    if planes.len() != rows * width {
        return Err(CorruptTable("byte planes of the wrong length"));
    }
    let mut bytes = vec![0u8; rows * width];
    for (i, &b) in planes.iter().enumerate() {
        let (byte, row) = (i / rows, i % rows);
        bytes[row * width + byte] = b;
    }
    Ok(bytes)
}

fn encode_column(
    column: &Column,
    kind: Kind,
    out: &mut Vec<u8>,
) -> polars::prelude::PolarsResult<()> {
    let series = column.as_materialized_series();
    match kind {
        Kind::Null => out.push(layout::PLAIN),
        Kind::Boolean => {
            let values = series.bool()?;
            let rows = values.len();
            if values.null_count() > 0 {
                out.push(layout::WITH_NULLS);
                push_bitmap(values.iter().map(|v| v.is_some()), rows, out);
                push_bitmap(values.iter().map(|v| v == Some(true)), rows, out);
            } else if rows >= 2 && (values.all() || !values.any()) {
                out.push(layout::CONSTANT);
                out.push(u8::from(values.all()));
            } else {
                out.push(layout::PLAIN);
                push_bitmap(values.iter().map(|v| v == Some(true)), rows, out);
            }
        }
        Kind::Int32 => encode_fixed!(series, i32, i32, out),
        Kind::Int64 => encode_fixed!(series, i64, i64, out),
        Kind::UInt32 => encode_fixed!(series, u32, u32, out),
        Kind::UInt64 => encode_fixed!(series, u64, u64, out),
        Kind::Float32 => encode_fixed!(series, f32, f32, out),
        Kind::Float64 => encode_fixed!(series, f64, f64, out),
        Kind::String => {
            let values = series.str()?;
            let push_text = |text: &str, out: &mut Vec<u8>| {
                out.extend_from_slice(&(text.len() as u32).to_le_bytes());
                out.extend_from_slice(text.as_bytes());
            };
            // `get` panics past the end: an empty column has no first value.
            let first = if values.is_empty() {
                None
            } else {
                values.get(0)
            };
            if values.null_count() > 0 {
                out.push(layout::WITH_NULLS);
                push_bitmap(values.iter().map(|v| v.is_some()), values.len(), out);
                values.iter().for_each(|v| push_text(v.unwrap_or(""), out));
            } else if values.len() >= 2 && values.iter().all(|v| v == first) {
                out.push(layout::CONSTANT);
                push_text(first.unwrap_or(""), out);
            } else {
                out.push(layout::PLAIN);
                values.iter().for_each(|v| push_text(v.unwrap_or(""), out));
            }
        }
    }
    Ok(())
}

/// Why an encoded table could not be read (only on corruption: parts are checksummed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("corrupt table encoding: {0}")]
pub(crate) struct CorruptTable(&'static str);

/// A reading position in an encoded table.
struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CorruptTable> {
        if self.bytes.len() < n {
            return Err(CorruptTable("truncated"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CorruptTable> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, CorruptTable> {
        Ok(u32::from_le_bytes(self.array()?))
    }
}

/// The row count and the schema bytes of an encoded table (the bytes identify the schema).
pub(crate) fn schema_bytes(blob: &[u8]) -> Result<(usize, &[u8]), CorruptTable> {
    let mut cursor = Cursor { bytes: blob };
    let rows = cursor.u32()? as usize;
    let schema_len = cursor.u32()? as usize;
    Ok((rows, cursor.take(schema_len)?))
}

/// Parses schema bytes as returned by [`schema_bytes`].
pub(crate) fn parse_schema(bytes: &[u8]) -> Result<TableSchema, CorruptTable> {
    let mut cursor = Cursor { bytes };
    let n = cursor.u32()? as usize;
    let mut columns = Vec::with_capacity(n.min(4096));
    for _ in 0..n {
        let len = u16::from_le_bytes(cursor.array()?) as usize;
        let name = std::str::from_utf8(cursor.take(len)?)
            .map_err(|_| CorruptTable("column name not UTF-8"))?
            .to_string();
        let kind = Kind::from_code(cursor.array::<1>()?[0]).ok_or(CorruptTable("unknown kind"))?;
        columns.push((name, kind));
    }
    Ok(TableSchema { columns })
}

/// One column of a table being stacked over jobs.
enum ColumnBuilder {
    Null(usize),
    Boolean(BooleanChunkedBuilder),
    Int32(PrimitiveChunkedBuilder<Int32Type>),
    Int64(PrimitiveChunkedBuilder<Int64Type>),
    UInt32(PrimitiveChunkedBuilder<UInt32Type>),
    UInt64(PrimitiveChunkedBuilder<UInt64Type>),
    Float32(PrimitiveChunkedBuilder<Float32Type>),
    Float64(PrimitiveChunkedBuilder<Float64Type>),
    String(StringChunkedBuilder),
}

impl ColumnBuilder {
    fn new(name: &str, kind: Kind, capacity: usize) -> Self {
        let name = PlSmallStr::from(name);
        match kind {
            Kind::Null => ColumnBuilder::Null(0),
            Kind::Boolean => ColumnBuilder::Boolean(BooleanChunkedBuilder::new(name, capacity)),
            Kind::Int32 => ColumnBuilder::Int32(PrimitiveChunkedBuilder::new(name, capacity)),
            Kind::Int64 => ColumnBuilder::Int64(PrimitiveChunkedBuilder::new(name, capacity)),
            Kind::UInt32 => ColumnBuilder::UInt32(PrimitiveChunkedBuilder::new(name, capacity)),
            Kind::UInt64 => ColumnBuilder::UInt64(PrimitiveChunkedBuilder::new(name, capacity)),
            Kind::Float32 => ColumnBuilder::Float32(PrimitiveChunkedBuilder::new(name, capacity)),
            Kind::Float64 => ColumnBuilder::Float64(PrimitiveChunkedBuilder::new(name, capacity)),
            Kind::String => ColumnBuilder::String(StringChunkedBuilder::new(name, capacity)),
        }
    }

    fn push_nulls(&mut self, rows: usize) {
        for _ in 0..rows {
            match self {
                ColumnBuilder::Null(n) => *n += 1,
                ColumnBuilder::Boolean(b) => b.append_null(),
                ColumnBuilder::Int32(b) => b.append_null(),
                ColumnBuilder::Int64(b) => b.append_null(),
                ColumnBuilder::UInt32(b) => b.append_null(),
                ColumnBuilder::UInt64(b) => b.append_null(),
                ColumnBuilder::Float32(b) => b.append_null(),
                ColumnBuilder::Float64(b) => b.append_null(),
                ColumnBuilder::String(b) => b.append_null(),
            }
        }
    }

    fn finish(self, name: &str) -> Series {
        match self {
            ColumnBuilder::Null(n) => Series::full_null(name.into(), n, &DataType::Null),
            ColumnBuilder::Boolean(b) => b.finish().into_series(),
            ColumnBuilder::Int32(b) => b.finish().into_series(),
            ColumnBuilder::Int64(b) => b.finish().into_series(),
            ColumnBuilder::UInt32(b) => b.finish().into_series(),
            ColumnBuilder::UInt64(b) => b.finish().into_series(),
            ColumnBuilder::Float32(b) => b.finish().into_series(),
            ColumnBuilder::Float64(b) => b.finish().into_series(),
            ColumnBuilder::String(b) => b.finish().into_series(),
        }
    }
}

fn bit(bitmap: &[u8], i: usize) -> bool {
    bitmap[i / 8] & (1 << (i % 8)) != 0
}

macro_rules! append_fixed {
    ($builder:expr, $bytes:expr, $valid:expr, $ty:ty) => {{
        const WIDTH: usize = std::mem::size_of::<$ty>();
        for (i, chunk) in $bytes.chunks_exact(WIDTH).enumerate() {
            if $valid.is_none_or(|v: &[u8]| bit(v, i)) {
                $builder.append_value(<$ty>::from_le_bytes(chunk.try_into().unwrap()));
            } else {
                $builder.append_null();
            }
        }
    }};
}

/// Skips or appends one encoded column of `kind` with `rows` rows.
fn decode_column(
    cursor: &mut Cursor<'_>,
    kind: Kind,
    rows: usize,
    target: Option<&mut ColumnBuilder>,
) -> Result<(), CorruptTable> {
    let layout = cursor.array::<1>()?[0];
    let bitmap_len = rows.div_ceil(8);
    let validity = match layout {
        layout::WITH_NULLS if kind != Kind::Null => Some(cursor.take(bitmap_len)?),
        layout::PLAIN | layout::WITH_NULLS => None,
        layout::CONSTANT | layout::PLANES if kind != Kind::Null => None,
        _ => return Err(CorruptTable("unknown column layout")),
    };
    match kind {
        Kind::Null => {
            if let Some(builder) = target {
                builder.push_nulls(rows);
            }
        }
        Kind::Boolean => {
            let bits: Cow<'_, [u8]> = match layout {
                layout::CONSTANT => {
                    let all = if cursor.array::<1>()?[0] != 0 {
                        0xff
                    } else {
                        0
                    };
                    Cow::Owned(vec![all; bitmap_len])
                }
                layout::PLANES => return Err(CorruptTable("booleans as byte planes")),
                _ => Cow::Borrowed(cursor.take(bitmap_len)?),
            };
            match target {
                None => {}
                Some(ColumnBuilder::Boolean(b)) => {
                    for i in 0..rows {
                        if validity.is_none_or(|v| bit(v, i)) {
                            b.append_value(bit(&bits, i));
                        } else {
                            b.append_null();
                        }
                    }
                }
                Some(_) => return Err(CorruptTable("column kind differs from the table's")),
            }
        }
        Kind::String => decode_texts(cursor, layout, rows, validity, target)?,
        _ => {
            let width = kind.width();
            let bytes: Cow<'_, [u8]> = match layout {
                layout::CONSTANT => {
                    let value = cursor.take(width)?;
                    match target {
                        Some(_) => Cow::Owned(value.repeat(rows)),
                        None => Cow::Borrowed(value),
                    }
                }
                layout::PLANES => {
                    let packed_len = cursor.u32()? as usize;
                    let packed = cursor.take(packed_len)?;
                    match target {
                        Some(_) => Cow::Owned(expand_planes(packed, rows, width)?),
                        None => Cow::Borrowed(packed),
                    }
                }
                _ => Cow::Borrowed(cursor.take(rows * width)?),
            };
            let Some(builder) = target else {
                return Ok(());
            };
            match (kind, builder) {
                (Kind::Int32, ColumnBuilder::Int32(b)) => append_fixed!(b, bytes, validity, i32),
                (Kind::Int64, ColumnBuilder::Int64(b)) => append_fixed!(b, bytes, validity, i64),
                (Kind::UInt32, ColumnBuilder::UInt32(b)) => append_fixed!(b, bytes, validity, u32),
                (Kind::UInt64, ColumnBuilder::UInt64(b)) => append_fixed!(b, bytes, validity, u64),
                (Kind::Float32, ColumnBuilder::Float32(b)) => {
                    append_fixed!(b, bytes, validity, f32)
                }
                (Kind::Float64, ColumnBuilder::Float64(b)) => {
                    append_fixed!(b, bytes, validity, f64)
                }
                _ => return Err(CorruptTable("column kind differs from the table's")),
            }
        }
    }
    Ok(())
}

/// Skips or appends one encoded text column.
fn decode_texts(
    cursor: &mut Cursor<'_>,
    layout: u8,
    rows: usize,
    validity: Option<&[u8]>,
    target: Option<&mut ColumnBuilder>,
) -> Result<(), CorruptTable> {
    let mut builder = match target {
        None => None,
        Some(ColumnBuilder::String(b)) => Some(b),
        Some(_) => return Err(CorruptTable("column kind differs from the table's")),
    };
    let mut text = || -> Result<&str, CorruptTable> {
        let len = cursor.u32()? as usize;
        std::str::from_utf8(cursor.take(len)?).map_err(|_| CorruptTable("text not UTF-8"))
    };
    match layout {
        layout::CONSTANT => {
            let value = text()?;
            if let Some(b) = builder.as_mut() {
                (0..rows).for_each(|_| b.append_value(value));
            }
        }
        layout::PLANES => return Err(CorruptTable("texts as byte planes")),
        _ => {
            for i in 0..rows {
                let value = text()?;
                if let Some(b) = builder.as_mut() {
                    if validity.is_none_or(|v| bit(v, i)) {
                        b.append_value(value);
                    } else {
                        b.append_null();
                    }
                }
            }
        }
    }
    Ok(())
}

/// Stacks encoded tables, in the order appended, over a fixed set of columns (the union of their
/// schemas): a column an appended table lacks, or holds with the `Null` kind, gets nulls.
pub(crate) struct TableBuilder {
    columns: Vec<(String, Kind)>,
    builders: Vec<ColumnBuilder>,
    rows: usize,
}

impl TableBuilder {
    pub(crate) fn new(columns: Vec<(String, Kind)>) -> Self {
        let builders = columns
            .iter()
            .map(|(name, kind)| ColumnBuilder::new(name, *kind, 0))
            .collect();
        TableBuilder {
            columns,
            builders,
            rows: 0,
        }
    }

    /// Rows appended since the last [`TableBuilder::take`].
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn width(&self) -> usize {
        self.columns.len()
    }

    /// Appends the encoded table `blob`, whose schema is `schema` and whose column `c` goes to
    /// builder column `targets[c]` (every builder column is targeted at most once).
    pub(crate) fn append(
        &mut self,
        blob: &[u8],
        schema: &TableSchema,
        targets: &[usize],
    ) -> Result<(), CorruptTable> {
        let (rows, schema_part) = schema_bytes(blob)?;
        let mut cursor = Cursor {
            bytes: &blob[8 + schema_part.len()..],
        };
        let mut filled = vec![false; self.builders.len()];
        for ((_, kind), &target) in schema.columns.iter().zip(targets) {
            let builder = self
                .builders
                .get_mut(target)
                .ok_or(CorruptTable("target"))?;
            decode_column(&mut cursor, *kind, rows, Some(builder))?;
            filled[target] = true;
        }
        for (builder, filled) in self.builders.iter_mut().zip(filled) {
            if !filled {
                builder.push_nulls(rows);
            }
        }
        self.rows += rows;
        Ok(())
    }

    /// The rows stacked so far as a frame; the builder starts empty again.
    pub(crate) fn take(&mut self) -> DataFrame {
        let rows = std::mem::take(&mut self.rows);
        let columns: Vec<Column> = self
            .columns
            .iter()
            .zip(self.builders.iter_mut())
            .map(|((name, kind), builder)| {
                let full = std::mem::replace(builder, ColumnBuilder::new(name, *kind, rows));
                full.finish(name).into_column()
            })
            .collect();
        DataFrame::new(rows, columns).expect("builders of equal length")
    }
}

/// Decodes one encoded table on its own.
#[cfg(test)]
pub(crate) fn decode_table(blob: &[u8]) -> Result<DataFrame, CorruptTable> {
    let (_, schema_part) = schema_bytes(blob)?;
    let schema = parse_schema(schema_part)?;
    let targets: Vec<usize> = (0..schema.columns.len()).collect();
    let mut builder = TableBuilder::new(schema.columns.clone());
    builder.append(blob, &schema, &targets)?;
    Ok(builder.take())
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    fn round_trip(df: &DataFrame) -> DataFrame {
        let mut blob = Vec::new();
        encode_table("t", df, &mut blob).unwrap();
        decode_table(&blob).unwrap()
    }

    #[test]
    fn every_kind_round_trips_with_nulls_bit_for_bit() {
        let df = df!(
            "s" => [Some("a"), None, Some(""), Some("ünïcode")],
            "f" => [Some(1.5f64), None, Some(-0.0), Some(f64::MIN_POSITIVE)],
            "f32" => [Some(1.5f32), Some(2.0), None, Some(-3.25)],
            "i" => [Some(-1i64), Some(i64::MAX), None, Some(0)],
            "i32" => [Some(-1i32), None, Some(7), Some(i32::MIN)],
            "u32" => [Some(1u32), Some(u32::MAX), Some(0), None],
            "u64" => [None, Some(u64::MAX), Some(0u64), Some(5)],
            "b" => [Some(true), Some(false), None, Some(true)],
            "full" => [1.0f64, 2.0, 3.0, 4.0],
        )
        .unwrap();
        let nulls = Column::full_null("n".into(), 4, &DataType::Null);
        let df = df.hstack(&[nulls]).unwrap();
        let back = round_trip(&df);
        assert_eq!(back.schema(), df.schema());
        assert!(back.equals_missing(&df), "{back}\n{df}");
        let bits = |d: &DataFrame| -> Vec<Option<u64>> {
            d.column("f")
                .unwrap()
                .f64()
                .unwrap()
                .iter()
                .map(|x| x.map(f64::to_bits))
                .collect()
        };
        assert_eq!(bits(&back), bits(&df));
    }

    #[test]
    fn empty_tables_and_zero_columns_round_trip() {
        let empty = df!(
            "x" => Vec::<f64>::new(),
            "s" => Vec::<String>::new(),
            "b" => Vec::<bool>::new(),
            "i" => Vec::<i64>::new(),
        )
        .unwrap();
        let back = round_trip(&empty);
        assert_eq!(back.height(), 0);
        assert_eq!(back.schema(), empty.schema());
        assert_eq!(round_trip(&DataFrame::empty()).width(), 0);
    }

    #[test]
    fn other_types_are_refused_by_name() {
        let list = Series::new("x".into(), &[Series::new("".into(), &[1.0f64])]);
        let df = DataFrame::new(1, vec![list.into()]).unwrap();
        let error = encode_table("traces", &df, &mut Vec::new()).unwrap_err();
        assert!(error.to_string().contains("\"x\""), "{error}");
    }

    #[test]
    fn a_builder_aligns_differing_schemas() {
        let a = df!("job_id" => ["a"], "mae" => [0.5f64]).unwrap();
        let b = df!("error" => ["boom"], "job_id" => ["b"]).unwrap();
        let nulls = Column::full_null("mae".into(), 1, &DataType::Null);
        let b = b.hstack(&[nulls]).unwrap();
        let union = vec![
            ("job_id".to_string(), Kind::String),
            ("mae".to_string(), Kind::Float64),
            ("error".to_string(), Kind::String),
        ];
        let mut builder = TableBuilder::new(union);
        for (df, targets) in [(&a, vec![0, 1]), (&b, vec![2, 0, 1])] {
            let mut blob = Vec::new();
            encode_table("jobs", df, &mut blob).unwrap();
            let schema = parse_schema(schema_bytes(&blob).unwrap().1).unwrap();
            builder.append(&blob, &schema, &targets).unwrap();
        }
        assert_eq!(builder.rows(), 2);
        let out = builder.take();
        let expected = df!(
            "job_id" => ["a", "b"],
            "mae" => [Some(0.5f64), None],
            "error" => [None, Some("boom")],
        )
        .unwrap();
        assert!(out.equals_missing(&expected), "{out}");
        assert_eq!(builder.rows(), 0);
        assert_eq!(builder.take().height(), 0);
    }

    /// The layout byte of each column of an encoded table (columns of the kinds used here).
    fn layouts(blob: &[u8]) -> Vec<u8> {
        let (rows, schema_part) = schema_bytes(blob).unwrap();
        let schema = parse_schema(schema_part).unwrap();
        let mut cursor = Cursor {
            bytes: &blob[8 + schema_part.len()..],
        };
        schema
            .columns
            .iter()
            .map(|(_, kind)| {
                let layout = cursor.bytes[0];
                decode_column(&mut cursor, *kind, rows, None).unwrap();
                layout
            })
            .collect()
    }

    #[test]
    fn repeated_and_large_columns_take_their_compact_layouts_and_round_trip_bit_for_bit() {
        let rows = 5_000;
        // Posterior-like draws: f32 values widened to f64, with a negative zero and a NaN.
        let mut draws: Vec<f64> = (0..rows)
            .map(|i| f64::from((i as f32 * 0.618).sin() * 2.5 - 0.3))
            .collect();
        draws[7] = -0.0;
        draws[11] = f64::NAN;
        let df = df!(
            "job_id" => vec!["0123456789ab"; rows],
            "chain" => vec![3i64; rows],
            "flag" => vec![true; rows],
            "cell" => (0..rows as i64).collect::<Vec<_>>(),
            "value" => draws.clone(),
            "small" => [1.0f64, 2.0, 3.0].repeat(rows / 3 + 1)[..rows].to_vec(),
            "one" => [Some(1.5f32)].repeat(rows),
        )
        .unwrap();
        let mut blob = Vec::new();
        encode_table("draws", &df, &mut blob).unwrap();
        use layout::{CONSTANT, PLANES};
        assert_eq!(
            layouts(&blob),
            [
                CONSTANT, CONSTANT, CONSTANT, PLANES, PLANES, PLANES, CONSTANT
            ]
        );
        let plain_bytes = rows * (4 + 12 + 8 + 8 + 8 + 8 + 4);
        assert!(blob.len() < plain_bytes / 3, "{} bytes", blob.len());
        let back = decode_table(&blob).unwrap();
        assert_eq!(back.schema(), df.schema());
        let bits = |d: &DataFrame| -> Vec<u64> {
            let values = d.column("value").unwrap().f64().unwrap();
            values.into_no_null_iter().map(f64::to_bits).collect()
        };
        assert_eq!(bits(&back), bits(&df));
        let (a, b) = (back.drop("value").unwrap(), df.drop("value").unwrap());
        assert!(a.equals_missing(&b), "{a}\n{b}");
        // A single row, or too few bytes to compress, stays plain.
        let tiny = df!("x" => [1.0f64], "y" => [1i64, 2, 3].repeat(100)[..1].to_vec()).unwrap();
        let mut blob = Vec::new();
        encode_table("t", &tiny, &mut blob).unwrap();
        assert_eq!(layouts(&blob), [layout::PLAIN, layout::PLAIN]);
    }

    #[test]
    fn a_corrupt_compressed_column_is_an_error_not_a_panic() {
        let values: Vec<i64> = (0..10_000).map(|i| i * i % 977).collect();
        let df = df!("v" => values).unwrap();
        let mut blob = Vec::new();
        encode_table("t", &df, &mut blob).unwrap();
        assert_eq!(layouts(&blob), [layout::PLANES]);
        for cut in [blob.len() - 1, blob.len() / 2, 30] {
            assert!(decode_table(&blob[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = blob.clone();
        let at = blob.len() - 10;
        flipped[at] ^= 0x5a;
        assert!(
            decode_table(&flipped).map_or(true, |d| !d.equals(&df)),
            "a flipped byte went unnoticed"
        );
    }

    #[test]
    fn truncated_blobs_are_errors_not_panics() {
        let df = df!("s" => ["abc"], "f" => [1.0f64]).unwrap();
        let mut blob = Vec::new();
        encode_table("t", &df, &mut blob).unwrap();
        for cut in 0..blob.len() {
            assert!(decode_table(&blob[..cut]).is_err(), "cut at {cut}");
        }
    }
}
