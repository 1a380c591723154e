#!/bin/sh
# Start N throwaway OpenSSH servers on 127.0.0.1 (as the current user, keys
# and configuration in DIR) and write DIR/ssh_config naming them host1..hostN,
# for trying `verdict --host` and for the benchmarks. Stop them with
# `kill $(cat DIR/*.pid)`. Debian: apt-get install openssh-server.
#
# Usage: scripts/ssh-loopback-hosts.sh DIR [N]
set -eu
directory=$1
count=${2:-1}
mkdir -p "$directory"
directory=$(cd "$directory" && pwd)
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || { echo "sshd not found (apt-get install openssh-server)" >&2; exit 2; }
[ -f "$directory/client_key" ] || ssh-keygen -q -t ed25519 -N '' -C verdict-loopback -f "$directory/client_key"
cp "$directory/client_key.pub" "$directory/authorized_keys"
[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
: > "$directory/ssh_config"
: > "$directory/known_hosts"
user=$(id -un)
index=1
while [ "$index" -le "$count" ]; do
    name=host$index
    home=$directory/$name
    mkdir -p "$home"
    [ -f "$home/host_key" ] || ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$home/host_key"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat > "$home/sshd_config" <<CONFIG
Port $port
ListenAddress 127.0.0.1
HostKey $home/host_key
AuthorizedKeysFile $directory/authorized_keys
StrictModes no
PidFile none
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
SetEnv XDG_CACHE_HOME=$home/cache
LogLevel ERROR
CONFIG
    printf '%s %s\n' "$name" "$(cut -d' ' -f1,2 "$home/host_key.pub")" >> "$directory/known_hosts"
    cat >> "$directory/ssh_config" <<CONFIG
Host $name
  HostName 127.0.0.1
  Port $port
  User $user
  IdentityFile $directory/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $directory/known_hosts
  StrictHostKeyChecking yes
  HostKeyAlias $name
  LogLevel ERROR
CONFIG
    "$sshd" -D -e -f "$home/sshd_config" </dev/null >/dev/null 2>>"$home/sshd.log" &
    echo $! > "$directory/$name.pid"
    index=$((index + 1))
done
# Wait until every server answers.
for name in $(sed -n 's/^Host //p' "$directory/ssh_config"); do
    tries=0
    until ssh -F "$directory/ssh_config" -o BatchMode=yes "$name" true 2>/dev/null; do
        tries=$((tries + 1))
        [ "$tries" -lt 100 ] || { echo "$name did not come up; see $directory/$name/sshd.log" >&2; exit 1; }
        sleep 0.1
    done
done
echo "$directory/ssh_config"
