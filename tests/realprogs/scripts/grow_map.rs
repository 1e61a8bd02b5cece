// grow_map.rs -- a Rust service for tests/realprogs/rp_rust_leak.py: a
// session table (HashMap of format!-ed Strings) and an index (BTreeMap)
// that grow steadily, next to format!/repeat churn that is dropped at once.
// Writes WORKDIR/half after HALF rounds, then waits (bounded) for
// WORKDIR/stop.  Usage: grow_map WORKDIR
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs, thread, time};

const ROUNDS: u64 = 60;
const HALF: u64 = 30;
const PER_ROUND: u64 = 1000;

/// The growth: one session string per id, kept forever, and its index entry.
#[inline(never)]
fn open_session(sessions: &mut HashMap<u64, String>, index: &mut BTreeMap<u64, u64>, id: u64) {
    let v = format!("session-{:08}-{}", id, "s".repeat(96));
    index.insert(id, v.len() as u64);
    sessions.insert(id, v);
}

/// The churn: temporary strings built and dropped.
#[inline(never)]
fn render_reply(id: u64) -> usize {
    let mut out = String::new();
    for k in 0..8 {
        let _ = write!(out, "<{}:{}>", id, k);
    }
    let body = "r".repeat(200 + (id % 50) as usize);
    out.len() + body.len()
}

fn main() {
    let work = env::args().nth(1).expect("usage: grow_map WORKDIR");
    let mut sessions = HashMap::new();
    let mut index = BTreeMap::new();
    let mut total = 0usize;
    for r in 0..ROUNDS {
        for i in 0..PER_ROUND {
            open_session(&mut sessions, &mut index, r * PER_ROUND + i);
            for k in 0..10 {
                total += render_reply(i * 10 + k);
            }
        }
        if r == HALF {
            fs::write(Path::new(&work).join("half"), b"").expect("write half");
        }
        thread::sleep(time::Duration::from_millis(50));
    }
    let stop = Path::new(&work).join("stop");
    for _ in 0..600 {
        if stop.exists() {
            break;
        }
        thread::sleep(time::Duration::from_millis(100));
    }
    println!("{} sessions, {} index entries, {} bytes rendered", sessions.len(), index.len(), total);
}
