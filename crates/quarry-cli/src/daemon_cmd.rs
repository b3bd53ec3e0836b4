//! `quarry daemon start|stop|status|run`: the workspace's resident quarry (quarry-daemon).

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Subcommand};
use quarry_daemon::client;

use crate::output::print_json;

#[derive(Args)]
pub struct DaemonArgs {
    #[command(subcommand)]
    action: DaemonAction,
}

#[derive(Subcommand)]
enum DaemonAction {
    /// Start it in the background (if it is not running) and wait until it answers.
    Start {
        #[arg(long)]
        json: bool,
    },
    /// Ask it to stop.
    Stop,
    /// Whether it runs: pid, build, uptime, requests, memory, model.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Run it in the foreground (what `start` runs detached).
    Run {
        /// Seconds without a request before it exits [default: daemon.idle_s, 900].
        #[arg(long)]
        idle: Option<u64>,
    },
}

pub fn daemon(dir: &Path, args: DaemonArgs) -> Result<()> {
    match args.action {
        DaemonAction::Start { json } => {
            quarry_engine::Workspace::open_existing(dir)?;
            let status = client::start_and_wait(dir, Duration::from_secs(30))?;
            if json {
                return print_json(&status);
            }
            eprintln!(
                "quarry daemon: pid {} on {}{}",
                status.pid,
                status.socket,
                status
                    .model
                    .map(|m| format!(", holding {m}"))
                    .unwrap_or_default()
            );
            Ok(())
        }
        DaemonAction::Stop => {
            if client::stop(dir) {
                eprintln!("quarry daemon: stopped");
            } else if let Some(hung) = unresponsive(dir) {
                anyhow::bail!("{hung}");
            } else {
                eprintln!("quarry daemon: none was running for {}", dir.display());
            }
            Ok(())
        }
        DaemonAction::Status { json } => match client::status(dir) {
            Some(status) if json => print_json(&status),
            Some(s) => {
                println!(
                    "pid {} · up {} s · {} requests · {} MiB · exits after {} s idle · {}",
                    s.pid,
                    s.uptime_s,
                    s.requests,
                    s.rss_kib.unwrap_or(0) / 1024,
                    s.idle_s,
                    s.model.as_deref().unwrap_or("no model")
                );
                if let Some(tree) = s.tree {
                    println!(
                        "grep memory: {} folders watched · {} file lists · {} file states",
                        tree.folders, tree.lists, tree.files
                    );
                }
                Ok(())
            }
            None => match unresponsive(dir) {
                Some(hung) => anyhow::bail!("{hung}"),
                None => {
                    eprintln!("quarry daemon: not running for {}", dir.display());
                    std::process::exit(crate::output::exit_code::NOTHING_FOUND);
                }
            },
        },
        DaemonAction::Run { idle } => run(dir, idle),
    }
}

/// A daemon that holds the workspace but did not answer (stopped with SIGSTOP, or hung).
fn unresponsive(dir: &Path) -> Option<client::Unresponsive> {
    let place = quarry_daemon::place::Place::of(dir);
    place.is_held().then(|| client::Unresponsive {
        pid: place.holder_pid(),
    })
}

#[cfg(unix)]
fn run(dir: &Path, idle: Option<u64>) -> Result<()> {
    quarry_engine::Workspace::open_existing(dir)?;
    let idle = match idle {
        Some(s) => s,
        None => quarry_engine::Config::load(dir)?
            .get("daemon.idle_s")?
            .parse()
            .unwrap_or(quarry_engine::config::DEFAULT_DAEMON_IDLE_S),
    };
    quarry_daemon::server::run(dir, Duration::from_secs(idle.max(1)))
}

#[cfg(not(unix))]
fn run(_dir: &Path, _idle: Option<u64>) -> Result<()> {
    anyhow::bail!("the daemon needs Unix sockets")
}
