//! Progress bars on stderr for long work; drawn only when stderr is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;

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
}
