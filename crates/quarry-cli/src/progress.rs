//! Progress bars on stderr for long work; drawn only when stderr is a terminal. Also where
//! Ctrl-C is caught during long work: the first press asks the engine to stop after its
//! current batch (so the command can say what it did and how to resume), the second stops
//! at once — both leave an index that opens and answers, since every batch is a transaction.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const INTERRUPTED_EXIT: i32 = 130;

/// From now on, Ctrl-C asks long work to stop after its current batch.
pub fn stop_on_ctrl_c() {
    // Fails only when a handler is already set (a second long command in one process).
    let _ = ctrlc::set_handler(|| {
        if CANCELLED.swap(true, Ordering::SeqCst) {
            eprintln!("\nquarry: stopped; what was stored is kept");
            std::process::exit(INTERRUPTED_EXIT);
        }
        eprintln!("\nquarry: stopping after the current batch (Ctrl-C again to stop now)");
    });
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    CANCELLED.load(Ordering::SeqCst)
}

pub struct Bars {
    current: Mutex<Option<ProgressBar>>,
}

impl Bars {
    pub fn new() -> Bars {
        Bars {
            current: Mutex::new(None),
        }
    }
}

impl quarry_engine::Progress for Bars {
    fn begin(&self, label: &str, total: u64) {
        let bar = if total == 0 {
            let b = ProgressBar::new_spinner();
            b.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
            b
        } else {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{msg:>18} [{bar:30}] {pos}/{len} ({per_sec}, {eta} left)",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b
        };
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_message(label.to_string());
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
    }

    fn advance(&self, steps: u64) {
        if let Some(bar) = self
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            bar.inc(steps);
        }
    }

    fn end(&self) {
        if let Some(bar) = self
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            bar.finish_and_clear();
        }
    }

    fn cancelled(&self) -> bool {
        interrupted()
    }
}
