# The two commands a newcomer needs (see README.md): `make demo` and `make test`.
# Both install what is missing first, so they work on a fresh Debian machine.

APT_PACKAGES := clang libclang-dev libopencv-dev libopencv-contrib-dev pkg-config gnugo fairy-stockfish chromium chromium-driver
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CARGO ?= cargo

.PHONY: deps demo test lint bench

deps:
	@missing=$$(for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

demo: deps
	$(CARGO) build --release --bin kradan
	@echo "== kradan record: a rendered 19x19 game in progress, filmed with hands, read from the video file"
	@echo "   (samples/go/clip-19x19-opening: White plays twice after move 4, captured stones left after move 19)"
	@rm -rf demo-output/record
	$(CARGO) run -q --release --bin kradan -- record samples/go/clip-19x19-opening/footage.mp4 --out demo-output/record
	@echo "== the record it wrote: game.sgf, events.jsonl (hash-chained), evidence/ (annotated frames before and after)"
	@ls demo-output/record; ls demo-output/record/evidence | head -4; echo "..."
	$(CARGO) run -q --release --bin kradan -- verify demo-output/record
	@echo "== the operator counts the game (TGA 13), no stones marked dead"
	$(CARGO) run -q --release --bin kradan -- score demo-output/record
	@echo
	@echo "== kradan record --game makhos: a rendered Mak-hos game (Thai checkers) in which White"
	@echo "   moves instead of capturing at move 9 (samples/makhos/clip): game.pdn and the flag, HOS 2.4"
	@rm -rf demo-output/record-makhos
	$(CARGO) run -q --release --bin kradan -- record samples/makhos/clip/footage.mp4 --game makhos --out demo-output/record-makhos --quiet
	@head -c 600 demo-output/record-makhos/game.pdn; echo " ..."
	@grep '"kind":"flag"' demo-output/record-makhos/events.jsonl | head -3
	$(CARGO) run -q --release --bin kradan -- verify demo-output/record-makhos
	@echo
	@echo "== footage with exact truth: kradan render films the first 8 moves of a 9x9 game (GNU Go v GNU Go)"
	@echo "   with a virtual camera: hands, light, lens, shake; PNG frames and truth.json in demo-output/clip"
	@rm -rf demo-output/clip
	$(CARGO) run -q --release --bin kradan -- render samples/go/gnugo-9x9.sgf --out demo-output/clip --seed 11 --moves 8 --resolution 1280x720 --frames
	@echo "== the still-photo recogniser reads the clip's last frame (row 0 is the picture's top edge, so the"
	@echo "   grid may be turned against the truth above, which is in the board's own rows)"
	@last=$$(ls demo-output/clip/frames | tail -1); \
		$(CARGO) run -q --release --bin kradan -- detect demo-output/clip/frames/$$last --size 9 --debug-dir demo-output/clip
	@echo "(the samples' rendered clips with their truth: samples/*/clip*/, see samples/README.md)"
	@echo
	@echo "== a photo (rendered) of a 19x19 middle game: the board found with no clicks, every point read"
	$(CARGO) run -q --release --bin kradan -- detect samples/go/rendered-19x19.jpg --debug-dir demo-output
	@echo "(the found lines, the fitted grid and each point's call: demo-output/rendered-19x19-*.png;"
	@echo " the true position is samples/go/rendered-19x19.txt)"
	@if [ -f ../shared/data/go-photos/gomrade/2/67.jpg ]; then \
		echo; echo "== a real photo from ../shared/data (gomrade/2/67.jpg)"; \
		$(CARGO) run -q --release --bin kradan -- detect ../shared/data/go-photos/gomrade/2/67.jpg --debug-dir demo-output; \
	fi
	@echo
	@echo "== a classical professional game, checked move by move (legal: exit 0)"
	$(CARGO) run -q --release --bin kradan -- replay samples/go/shusaku-gennan-1846.sgf
	@echo
	@echo "== a game with irregularities: each flagged with its rule (exit 1 = illegal moves found)"
	@$(CARGO) run -q --release --bin kradan -- replay samples/go/irregular-9x9.sgf; \
		status=$$?; [ $$status -eq 1 ] && echo "(exit 1: illegal moves found, as expected)"
	@echo
	@echo "== Mak-hos (Thai checkers): a backward man, a double move, missed captures (exit 1)"
	@$(CARGO) run -q --release --bin kradan -- replay samples/makhos/irregular.pdn; \
		status=$$?; [ $$status -eq 1 ] && echo "(exit 1: illegal moves found, as expected)"
	@echo
	@echo "== Makruk (Thai chess): a short legal game, with its FEN"
	$(CARGO) run -q --release --bin kradan -- replay samples/makruk/short_game.pgn

test: deps
	$(CARGO) test --all-targets

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

bench: deps
	$(CARGO) bench
