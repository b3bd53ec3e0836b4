//! PDF extraction on documents built here (quarry_sources::pdf::fixture): pages and their
//! numbers, headings by outline and by font size, and every way a PDF can fail to be read.

use quarry_sources::pdf::{extract, extract_bounded, fixture, reason, PdfLimits};
use std::time::{Duration, Instant};

fn three_pages() -> lopdf::Document {
    fixture::document(
        &[
            vec![
                ("Service Manual", 24.0),
                ("Version 2 of the manual for operators.", 11.0),
            ],
            vec![
                ("Retry policy", 18.0),
                ("Clients retry a failed request three times", 11.0),
                ("with exponential backoff between attempts.", 11.0),
                ("Jitter", 14.0),
                ("Each wait is randomised by up to twenty percent.", 11.0),
            ],
            vec![
                ("Timeouts", 18.0),
                ("A request is abandoned after thirty seconds.", 11.0),
            ],
        ],
        &[],
    )
}

#[test]
fn pages_keep_their_numbers_text_and_font_size_headings() {
    let doc = extract(&fixture::bytes(three_pages()), &PdfLimits::default()).unwrap();
    let numbers: Vec<u32> = doc.pages.iter().map(|p| p.number).collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert!(
        doc.pages[1].text.contains("exponential backoff"),
        "{:?}",
        doc.pages[1].text
    );
    assert!(!doc.pages[0].text.contains("backoff"));
    let headings: Vec<(u32, usize, &str)> = doc
        .pages
        .iter()
        .flat_map(|p| {
            p.headings
                .iter()
                .map(move |h| (p.number, h.level, h.text.as_str()))
        })
        .collect();
    // Sizes 24, 18 and 14 over an 11-point body: three levels, largest first.
    assert_eq!(
        headings,
        [
            (1, 1, "Service Manual"),
            (2, 2, "Retry policy"),
            (2, 3, "Jitter"),
            (3, 2, "Timeouts")
        ]
    );
    let retry = &doc.pages[1];
    let line = retry
        .text
        .lines()
        .nth(retry.headings[0].line as usize - 1)
        .unwrap();
    assert_eq!(line, "Retry policy");
}

#[test]
fn an_outline_names_the_headings_when_the_document_has_one() {
    let doc = fixture::document(
        &[
            vec![("Overview of the system", 11.0), ("Some words here.", 11.0)],
            vec![
                ("Body text first.", 11.0),
                ("Error handling", 11.0),
                ("More words.", 11.0),
            ],
        ],
        &[(1, "Overview of the system", 1), (2, "Error handling", 2)],
    );
    let doc = extract(&fixture::bytes(doc), &PdfLimits::default()).unwrap();
    let found: Vec<(u32, u32, usize)> = doc
        .pages
        .iter()
        .flat_map(|p| p.headings.iter().map(move |h| (p.number, h.line, h.level)))
        .collect();
    // Same size as the body: only the outline could have told.
    assert_eq!(found, [(1, 1, 1), (2, 2, 2)]);
}

#[test]
fn corrupt_truncated_and_foreign_bytes_are_skipped_without_a_panic() {
    assert_eq!(
        extract(b"%PDF-1.7\nnot really a pdf", &PdfLimits::default()).unwrap_err(),
        reason::CORRUPT
    );
    assert_eq!(
        extract(b"", &PdfLimits::default()).unwrap_err(),
        reason::CORRUPT
    );
    assert_eq!(
        extract(&[0xff; 4096], &PdfLimits::default()).unwrap_err(),
        reason::CORRUPT
    );
    // Cut anywhere: an answer every time (what survives, or a reason), never a panic.
    let whole = fixture::bytes(three_pages());
    for cut in (0..whole.len()).step_by(97) {
        match extract(&whole[..cut], &PdfLimits::default()) {
            Ok(doc) => assert!(doc.pages.len() <= 3),
            Err(why) => assert!([reason::CORRUPT, reason::NO_TEXT].contains(&why), "{why}"),
        }
    }
}

#[test]
fn a_password_protected_pdf_is_skipped_and_an_owner_locked_one_is_read() {
    let locked = fixture::encrypted(three_pages(), "secret");
    assert_eq!(
        extract(&locked, &PdfLimits::default()).unwrap_err(),
        reason::ENCRYPTED
    );
    let restricted = fixture::encrypted(three_pages(), "");
    let doc = extract(&restricted, &PdfLimits::default()).unwrap();
    assert!(doc.pages[1].text.contains("exponential backoff"));
}

#[test]
fn a_pdf_without_a_text_layer_is_skipped() {
    // Pages that only draw (as a scan's image does): no glyph at all.
    let doc = fixture::document(&[vec![], vec![]], &[]);
    assert_eq!(
        extract(&fixture::bytes(doc), &PdfLimits::default()).unwrap_err(),
        reason::NO_TEXT
    );
}

#[test]
fn extraction_stops_at_its_time_limit() {
    let limits = PdfLimits {
        timeout: Duration::ZERO,
        ..Default::default()
    };
    let started = Instant::now();
    let result = extract_bounded(fixture::bytes(three_pages()), &limits);
    assert_eq!(result.unwrap_err(), reason::TIMEOUT);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn pages_and_text_past_the_limits_are_left_out() {
    let pages: Vec<Vec<(&str, f64)>> = (0..12).map(|_| vec![("A page of words.", 11.0)]).collect();
    let bytes = fixture::bytes(fixture::document(&pages, &[]));
    let limits = PdfLimits {
        max_pages: 5,
        ..Default::default()
    };
    assert_eq!(extract(&bytes, &limits).unwrap().pages.len(), 5);
    let limits = PdfLimits {
        max_text_bytes: 40,
        ..Default::default()
    };
    let doc = extract(&bytes, &limits).unwrap();
    let total: usize = doc.pages.iter().map(|p| p.text.len()).sum();
    assert!(total <= 40, "{total}");
}
