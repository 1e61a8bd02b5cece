// alloc_rjem.rs -- a Rust program whose #[global_allocator] calls a
// statically linked jemalloc through its _rjem_ names (mallocx, sdallocx,
// rallocx), as tikv-jemallocator does, for tests/alloc.  Leaks 5000 bytes
// from leak_vec, 2400 from leak_box and 7000 (grown with rallocx) from
// leak_grown; churn() frees everything it allocates; with the argument
// "threads" churn also runs on 4 threads.  Prints "ok".
use std::alloc::{GlobalAlloc, Layout};
extern "C" {
    fn _rjem_mallocx(size: usize, flags: i32) -> *mut u8;
    fn _rjem_sdallocx(ptr: *mut u8, size: usize, flags: i32);
    fn _rjem_rallocx(ptr: *mut u8, size: usize, flags: i32) -> *mut u8;
}
struct Je;
fn flags(align: usize) -> i32 { if align <= 16 { 0 } else { align.trailing_zeros() as i32 } }
unsafe impl GlobalAlloc for Je {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 { _rjem_mallocx(l.size(), flags(l.align())) }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) { _rjem_sdallocx(p, l.size(), flags(l.align())) }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 { _rjem_rallocx(p, n, flags(l.align())) }
}
#[global_allocator]
static A: Je = Je;
#[inline(never)] fn leak_vec() { std::mem::forget(vec![7u8; 5000]); }
#[inline(never)] fn leak_box() { Box::leak(Box::new([1u64; 300])); }
#[inline(never)] fn leak_grown() { let mut v: Vec<u8> = Vec::with_capacity(100); v.reserve_exact(7000); std::mem::forget(v); }
static SINK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
fn keep<T>(v: &Vec<T>) { SINK.fetch_add(v.as_ptr() as usize, std::sync::atomic::Ordering::Relaxed); }
#[inline(never)] fn churn() { for i in 0..1000 { let v = vec![0u8; 100 + i % 50]; keep(&v); let mut w: Vec<u32> = Vec::with_capacity(4); w.reserve_exact(300); keep(&w); } }
fn main() {
    let threads = std::env::args().nth(1).map_or(false, |a| a == "threads");
    churn();
    if threads { let h: Vec<_> = (0..4).map(|_| std::thread::spawn(churn)).collect(); for t in h { t.join().unwrap(); } }
    leak_vec(); leak_box(); leak_grown();
    println!("ok");
}
