#!/usr/bin/env bash
# Installs what queryfs needs on Debian 12, only when it is missing:
#   libfuse3-dev + fuse3 to build and mount, libexpat1-dev for XMP sidecars; extra packages named as arguments
#   (the test script adds fio, attr, git and gio, the benchmark bindfs; pyfuse3 is
#   python3-pyfuse3 for Debian's /usr/bin/python3, which Tests/Tools/faultfs.py runs on).
set -euo pipefail

need=()
pkg-config --exists fuse3 2>/dev/null || need+=(libfuse3-dev pkg-config)
pkg-config --exists expat 2>/dev/null || need+=(libexpat1-dev)
command -v fusermount3 >/dev/null 2>&1 || need+=(fuse3)
for extra in "$@"; do
    case "$extra" in
        attr) command -v setfattr >/dev/null 2>&1 || need+=(attr) ;;
        gio) command -v gio >/dev/null 2>&1 || need+=(libglib2.0-bin) ;;
        inotify-tools) command -v inotifywait >/dev/null 2>&1 || need+=(inotify-tools) ;;
        xvfb) command -v Xvfb >/dev/null 2>&1 || need+=(xvfb) ;;
        man) command -v man >/dev/null 2>&1 || need+=(man-db) ;;
        ripgrep) command -v rg >/dev/null 2>&1 || need+=(ripgrep) ;;
        libyaml) [ -e /usr/include/yaml.h ] || need+=(libyaml-dev) ;;
        kioclient) command -v kioclient5 >/dev/null 2>&1 || need+=(kde-cli-tools) ;;
        pyfuse3) /usr/bin/python3 -c 'import pyfuse3, trio' >/dev/null 2>&1 || need+=(python3-pyfuse3) ;;
        *) command -v "$extra" >/dev/null 2>&1 || need+=("$extra") ;;
    esac
done

if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -e /dev/fuse ]; then
    # Containers sometimes lack the node even though the module is loaded.
    modprobe fuse 2>/dev/null || true
    [ -e /dev/fuse ] || echo "warning: /dev/fuse is missing: mounting will fail" >&2
fi
