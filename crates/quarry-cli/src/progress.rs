//! Progress bars on stderr for long work; drawn only when stderr is a terminal. Also where
//! Ctrl-C is caught during long work: the first press asks the engine to stop after its
//! current batch (so the command can say what it did and how to resume), the second stops
//! at once — both leave an index that opens and answers, since every batch is a transaction.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// Where stderr is not a terminal (a log, an agent's pipe) bars are not drawn; long work
    /// says what it does in plain lines instead: when it starts, every `PLAIN_EVERY`, and
    /// when it ends.
    plain: Mutex<Option<Plain>>,
    terminal: bool,
}

struct Plain {
    label: String,
    total: u64,
    done: u64,
    started: Instant,
    said: Instant,
}

/// How often long work says how far it is, when no bar is drawn.
const PLAIN_EVERY: Duration = Duration::from_secs(30);
/// Work of fewer steps is quick enough to pass in silence.
const PLAIN_MIN_STEPS: u64 = 500;

impl Bars {
    pub fn new() -> Bars {
        Bars {
            current: Mutex::new(None),
            plain: Mutex::new(None),
            terminal: std::io::stderr().is_terminal(),
        }
    }
}

impl quarry_engine::Progress for Bars {
    fn begin(&self, label: &str, total: u64) {
        if !self.terminal && total >= PLAIN_MIN_STEPS {
            eprintln!("quarry: {label}: {total} to do (Ctrl-C stops after the current batch)");
            let now = Instant::now();
            *self.plain.lock().unwrap_or_else(|e| e.into_inner()) = Some(Plain {
                label: label.to_string(),
                total,
                done: 0,
                started: now,
                said: now,
            });
        }
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
        if let Some(plain) = self
            .plain
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            plain.done += steps;
            if plain.said.elapsed() >= PLAIN_EVERY {
                plain.said = Instant::now();
                let rate = plain.done as f64 / plain.started.elapsed().as_secs_f64().max(0.001);
                let left = plain.total.saturating_sub(plain.done) as f64 / rate.max(0.001);
                eprintln!(
                    "quarry: {}: {}/{} ({rate:.0}/s, about {:.0} s left)",
                    plain.label, plain.done, plain.total, left
                );
            }
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
        if let Some(plain) = self.plain.lock().unwrap_or_else(|e| e.into_inner()).take() {
            // The phase's own summary line says what was done; this says it is over.
            eprintln!(
                "quarry: {}: done in {:.1} s",
                plain.label,
                plain.started.elapsed().as_secs_f64()
            );
        }
    }

    fn note(&self, text: &str) {
        match self
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            Some(bar) => bar.suspend(|| eprintln!("quarry: {text}")),
            None => eprintln!("quarry: {text}"),
        }
    }

    fn cancelled(&self) -> bool {
        interrupted()
    }
}
