//! `kradan serve`: the boards of a hall recorded live, served to a broadcast overlay and a
//! referee desk (`docs/serve.md`).
//!
//! One recorder thread per board ([`crate::recorder::record_with`]) hands every event to
//! the [`hall::Hall`] as soon as it is synced; the hall stores it ([`crate::store`]),
//! recomputes what the pages show ([`game`]) and pushes it to every page listening
//! (server-sent events). The referee's actions go back to the recorder between two frames,
//! or onto the record itself once its recorder has ended.

pub mod api;
pub mod eight;
pub mod event_file;
pub mod game;
pub mod hall;

use event_file::EventFile;
use hall::Hall;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub struct ServeOptions {
    pub listen: SocketAddr,
    pub event: Option<PathBuf>,
    /// Where the store and the boards' record folders live.
    pub data: PathBuf,
    /// The referee's token; one is made up and printed when none is given.
    pub token: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Bad(String),
    #[error(transparent)]
    Hall(#[from] hall::HallError),
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server stopped: {0}")]
    Io(#[from] std::io::Error),
}

impl ServeError {
    /// 2 bad input (event file, token, address in use), 4 the server failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::Bad(_) | ServeError::Hall(_) | ServeError::Listen { .. } => 2,
            ServeError::Io(_) => 4,
        }
    }
}

/// Serves until Ctrl-C or SIGTERM, then ends every recorder cleanly.
pub fn serve(options: ServeOptions) -> Result<(), ServeError> {
    let boards = match &options.event {
        Some(path) => EventFile::load(path).map_err(ServeError::Bad)?.board,
        None => Vec::new(),
    };
    let token = match options.token {
        Some(token) => {
            if token.len() < 8 || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(ServeError::Bad(
                    "--token: at least 8 printable characters, no spaces".into(),
                ));
            }
            token
        }
        None => made_up_token()?,
    };
    let hall = Arc::new(Hall::open(&options.data, &boards, token)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .map_err(|source| ServeError::Listen {
                address: options.listen,
                source,
            })?;
        let address = listener.local_addr()?;
        hall.start(&boards);
        eprintln!(
            "kradan serve: http://{address}/ ({} boards; referee desk http://{address}/referee)",
            hall.boards().count()
        );
        eprintln!("referee token: {}", hall.token);
        if !address.ip().is_loopback() {
            eprintln!(
                "kradan serve: listening beyond this machine ({address}); pages are open to all, actions need the token"
            );
        }
        axum::serve(listener, api::router(Arc::clone(&hall)))
            .with_graceful_shutdown(shutdown(Arc::clone(&hall)))
            .await?;
        Ok::<_, ServeError>(())
    })?;
    // Recorders are blocking threads: they end at their next frame and write their session end.
    let stopping = Arc::clone(&hall);
    std::thread::spawn(move || stopping.stop())
        .join()
        .map_err(|_| ServeError::Bad("a recorder panicked while ending".into()))?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(())
}

async fn shutdown(hall: Arc<Hall>) {
    stop_signal().await;
    eprintln!("kradan serve: stopping; each recorder ends its session");
    hall.close_streams();
}

async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
    tokio::select! {
        _ = interrupt => {}
        _ = terminate.recv() => {}
    }
}

/// 128 bits from the kernel's generator, as hex.
fn made_up_token() -> Result<String, ServeError> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| {
            ServeError::Bad(format!(
                "cannot make a token (/dev/urandom: {e}); give one with --token"
            ))
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
