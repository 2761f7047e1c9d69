//! Provisions ONNX Runtime (ORT_DYLIB_PATH, the checkout's .ort/, the user's cache, or the pinned
//! PyPI wheel fetched into that cache) and prints the library's path:
//! `cargo run -q -p provision --example ort_fetch`.

fn main() {
    match provision::library() {
        Ok(path) => println!("{}", path.display()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
