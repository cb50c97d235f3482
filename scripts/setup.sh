# Sourced by the other scripts: make sure the toolchain pieces exist.
# Guests are built for wasm32-wasip2 by host/build.rs; the target is all they need.
if ! rustup target list --installed | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
for component in clippy rustfmt; do
  if ! rustup component list --installed | grep -q "^$component"; then
    rustup component add "$component"
  fi
done
