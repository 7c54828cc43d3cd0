# Session 37 call h (1 x H200): the Python package's GPU checks at the small sizes (--quick: n =
# 2048, the FP64 path with its solves by cublasDtrsm; matmul 2048^2) on the final code's install.
# Here: scripts/test-python-gpu --pack build-me bundle-py
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/h_command.sh", kind="nvidia-h200", carry=["bundle-py.tar.xz"], timeout_s=240)
set -u
rm -rf bundle-py; tar xJf bundle-py.tar.xz
timeout -s KILL 220 scripts/test-python-gpu bundle-py "$OUT/python" --quick --only solve,matmul > "$OUT/python.log" 2>&1
echo "exit $?" >> "$OUT/python.log"
tail -30 "$OUT/python.log" | cut -c1-220
