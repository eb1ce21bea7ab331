#!/usr/bin/env bash
# Prepare this machine for the rocmprov lab (run as root; idempotent).
#  1. install the system packages the lab needs
#  2. raise inotify limits (every container's systemd draws on one per-user pool)
#  3. build the Debian 12 base root once and cache it as a tarball in $CACHE
# Usage: sudo bash tests/lab/prepare.sh        (REBUILD=1 forces a fresh base)
set -euo pipefail

CACHE=${ROCMPROV_LAB_CACHE:-/var/cache/rocmprov-lab}
# Bump BASE_VERSION whenever the package list or the tweaks below change.
BASE_VERSION=3
SUITE=bookworm
BASE_PKGS=systemd,systemd-sysv,dbus,libpam-systemd,udev,openssh-server,python3,python3-apt,sudo,iproute2,ca-certificates,procps,kmod,gnupg,less
# openssh-server, sudo and passwd: tests/test_ssh.py starts real sshd daemons on loopback (never
# the system's own sshd: the package's daemon is kept from starting, see install_host_packages).
# prometheus-node-exporter and prometheus (promtool): tests/test_prometheus_metrics.py.
# chromium: tests/test_html_report.py opens the fleet HTML report in headless Chromium.
HOST_PKGS=(systemd-container debootstrap iproute2 zstd openssh-client openssh-server sudo passwd
           nftables dpkg-dev gnupg util-linux tar debian-archive-keyring
           prometheus-node-exporter prometheus chromium)
TARBALL="$CACHE/base-$SUITE-v$BASE_VERSION.tar.zst"

log() { printf 'prepare: %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || { echo "prepare.sh: run as root" >&2; exit 1; }

install_host_packages() {
  local missing=() p status
  for p in "${HOST_PKGS[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)  # no `| grep -q`: SIGPIPE
    [ "$status" = "install ok installed" ] || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -q
    # No service of an installed package may start here (the tests start their own sshd).
    local rc_policy=/usr/sbin/policy-rc.d had_policy=0
    [ -e "$rc_policy" ] && had_policy=1
    [ "$had_policy" = 1 ] || printf '#!/bin/sh\nexit 101\n' > "$rc_policy"
    chmod 0755 "$rc_policy"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
      || { [ "$had_policy" = 1 ] || rm -f "$rc_policy"; return 1; }
    [ "$had_policy" = 1 ] || rm -f "$rc_policy"
  fi
}

raise_sysctls() {
  printf 'fs.inotify.max_user_instances = 8192\nfs.inotify.max_user_watches = 524288\n' \
    > /etc/sysctl.d/60-rocmprov-lab.conf
  sysctl -q -p /etc/sysctl.d/60-rocmprov-lab.conf
}

# First Debian mirror URI this machine's apt uses (deb822 .sources or one-line .list).
debian_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk '/^[[:space:]]*#/ {next}
               /^URIs:/ {for (i = 2; i <= NF; i++) print $i}
               /^deb[[:space:]]/ {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; break}}' \
          "$f" | grep -E '/debian/?$' | head -n 1 || true)
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  echo "http://deb.debian.org/debian"
}

tweak_base() {
  local root=$1 t
  # Timers that race tests for the dpkg lock.
  for t in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
           fstrim.timer man-db.timer; do
    ln -sf /dev/null "$root/etc/systemd/system/$t"
  done
  # Units that make no sense in a container and only slow the boot.
  for t in systemd-networkd-wait-online.service getty@tty1.service console-getty.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$t"
  done
  # No DNS in the lab: fail fast.
  rm -f "$root/etc/resolv.conf"
  printf 'nameserver 127.0.0.53\noptions timeout:1 attempts:1\n' > "$root/etc/resolv.conf"
  # sshd for parallel Ansible and audits; host keys are made per host.
  mkdir -p "$root/etc/ssh/sshd_config.d"
  cat > "$root/etc/ssh/sshd_config.d/10-rocmprov-lab.conf" <<'CONF'
MaxStartups 100:30:200
MaxSessions 100
UseDNS no
PasswordAuthentication no
PermitRootLogin prohibit-password
CONF
  rm -f "$root"/etc/ssh/ssh_host_*
  # apt: no recommends, few retries, so tests fail fast.
  cat > "$root/etc/apt/apt.conf.d/90rocmprov-lab" <<'CONF'
APT::Install-Recommends "false";
Acquire::Retries "1";
Acquire::http::Timeout "20";
CONF
  # fwupd never starts in a container unless the condition is cleared.
  mkdir -p "$root/etc/systemd/system/fwupd.service.d"
  printf '[Unit]\nConditionVirtualization=\n' > "$root/etc/systemd/system/fwupd.service.d/lab.conf"
  # sudo user (keys and passwordless sudo are written per host).
  chroot "$root" useradd --create-home --shell /bin/bash admin 2>/dev/null || true
  chroot "$root" apt-cache gencaches >/dev/null
  chroot "$root" apt-get clean
  : > "$root/etc/machine-id"
  rm -f "$root/var/lib/dbus/machine-id"
}

build_base() {
  local mirror work root
  mirror=$(debian_mirror)
  work=$(mktemp -d "$CACHE/build.XXXXXX")
  root="$work/root"
  trap 'rm -rf --one-file-system "$work"' EXIT
  log "debootstrap $SUITE from $mirror (about 1.5 min)"
  debootstrap --variant=minbase --include="$BASE_PKGS" "$SUITE" "$root" "$mirror" >"$work/log" 2>&1 \
    || { tail -n 30 "$work/log" >&2; exit 1; }
  # Same sources as this machine for the hosts (main + updates + security).
  cat > "$root/etc/apt/sources.list" <<SRC
deb $mirror $SUITE main
deb $mirror $SUITE-updates main
deb ${mirror%/debian}/debian-security $SUITE-security main
SRC
  tweak_base "$root"
  log "packing $TARBALL"
  tar --zstd --xattrs --acls --numeric-owner -C "$root" -cf "$work/base.tar.zst" .
  mv "$work/base.tar.zst" "$TARBALL"
  rm -rf --one-file-system "$work"
  trap - EXIT
}

# Drop old tarballs and unpacked roots (lab.py unpacks to base-...-vN.<mtime>), except those
# that a running lab still uses as its overlay lower layer.
prune_old() {
  local current d mounts
  current="$(basename "$TARBALL" .tar.zst).$(python3 -c 'import os,sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$TARBALL")"
  mounts=$(cat /proc/mounts)
  for d in "$CACHE"/base-*; do
    [ -e "$d" ] || continue
    case "$(basename "$d")" in
      "$(basename "$TARBALL")" | "$current" | "$current.unpacked") continue ;;
    esac
    [[ "$mounts" == *"lowerdir=$d,"* ]] && continue
    rm -rf --one-file-system "$d"
  done
}

main() {
  install_host_packages
  raise_sysctls
  mkdir -p "$CACHE"
  if [ -f "$TARBALL" ] && [ -z "${REBUILD:-}" ]; then
    log "base cached: $TARBALL"
  else
    build_base
  fi
  prune_old
  echo "$TARBALL"
}

main "$@"
