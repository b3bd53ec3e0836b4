//! Rows for COPY's text format, and streaming them in: how every write here sends its rows
//! (files, chunks, posting-list blocks, commits). Hand-written because COPY's text format is a
//! few escapes, and tokio-postgres streams the bytes.

use anyhow::Result;

use crate::connection::PgTransaction;

/// COPY's text format for one field (`\N` for none): backslash, tab and line ends escaped;
/// NUL, which a PostgreSQL text cannot hold, replaced. Runs without those bytes are copied
/// whole (they are ASCII, so a run never splits a character).
fn field(out: &mut Vec<u8>, value: Option<&str>) {
    let Some(value) = value else {
        out.extend_from_slice(b"\\N");
        return;
    };
    let bytes = value.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: &[u8] = match b {
            b'\\' => b"\\\\",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            0 => "\u{fffd}".as_bytes(),
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..i]);
        out.extend_from_slice(escaped);
        run = i + 1;
    }
    out.extend_from_slice(&bytes[run..]);
}

pub(crate) fn row(out: &mut Vec<u8>, fields: &[Option<&str>]) {
    for (i, value) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        field(out, *value);
    }
    out.push(b'\n');
}

pub(crate) fn copy(tx: &mut PgTransaction, statement: &str, data: Vec<u8>) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    tx.copy_in(statement, data)?;
    Ok(())
}

/// An array's text form (`{1,-2,3}`): a COPY field or a parameter cast to an array.
pub(crate) fn array_literal<T: ToString>(values: &[T]) -> String {
    let items: Vec<String> = values.iter().map(T::to_string).collect();
    format!("{{{}}}", items.join(","))
}
