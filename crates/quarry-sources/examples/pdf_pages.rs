//! Extraction throughput: `cargo run --release -p quarry-sources --example pdf_pages -- A.pdf
//! [B.pdf …] [--show N]` extracts each PDF as indexing does (bounded, pages in parallel) and
//! prints pages, headings, text size and pages per second; `--show N` prints page N's text
//! with its headings marked. bench/docs_eval.py runs it on a 345-page manual.

use quarry_sources::pdf::{extract_bounded, PdfLimits};
use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().position(|a| a == "--show").map(|i| {
        let n = args[i + 1].parse::<u32>().expect("--show N");
        args.drain(i..i + 2);
        n
    });
    let (mut pages, mut seconds) = (0usize, 0f64);
    for path in &args {
        let bytes = std::fs::read(path).expect("readable file");
        let started = Instant::now();
        let result = extract_bounded(bytes, &PdfLimits::default());
        let elapsed = started.elapsed().as_secs_f64();
        match result {
            Ok(doc) => {
                let headings: usize = doc.pages.iter().map(|p| p.headings.len()).sum();
                let bytes: usize = doc.pages.iter().map(|p| p.text.len()).sum();
                println!(
                    "{path}: {} pages, {headings} headings, {bytes} bytes of text in {elapsed:.2} s ({:.0} pages/s)",
                    doc.pages.len(),
                    doc.pages.len() as f64 / elapsed
                );
                pages += doc.pages.len();
                seconds += elapsed;
                if let Some(page) = show.and_then(|n| doc.pages.iter().find(|p| p.number == n)) {
                    for (i, line) in page.text.lines().enumerate() {
                        let mark = page
                            .headings
                            .iter()
                            .find(|h| h.line as usize == i + 1)
                            .map_or(String::new(), |h| format!("[h{}] ", h.level));
                        println!("{:4} {mark}{line}", i + 1);
                    }
                }
            }
            Err(reason) => println!("{path}: skipped ({reason}) after {elapsed:.2} s"),
        }
    }
    if args.len() > 1 && seconds > 0.0 {
        println!(
            "total: {pages} pages in {seconds:.2} s ({:.0} pages/s)",
            pages as f64 / seconds
        );
    }
}
