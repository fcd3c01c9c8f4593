#!/usr/bin/env bash
# A real sound device for machines without one (CI, servers, containers): a PulseAudio daemon
# with a null sink as the default speaker and the sink's monitor as the default microphone.
# What is played comes back on the monitor, so a test can hear the agent through PortAudio,
# which reaches PulseAudio through ALSA's pulse plugin (`python -m sounddevice` lists "pulse").
#
# Debian/Ubuntu packages: pulseaudio (it brings pulseaudio-utils and libasound2-plugins) and,
# for sounddevice, libportaudio2.
#
# Safe to re-run. A server that is already running is left as it is (its defaults too); only a
# missing null sink is added, and PULSE_SINK/PULSE_SOURCE select it for one program.
# Stop the daemon this script started with `pulseaudio --kill`.
set -euo pipefail

SINK=${PIPELINE_NULL_SINK:-pipeline_null}

for tool in pulseaudio pactl; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool is not installed; install the Debian package pulseaudio" \
         "(apt-get install pulseaudio) and run this again" >&2
    exit 1
  fi
done

# Without the ALSA pulse plugin PortAudio never reaches the server.
if ! compgen -G "/usr/lib/*/alsa-lib/libasound_module_pcm_pulse.so" >/dev/null \
    && ! compgen -G "/usr/lib/alsa-lib/libasound_module_pcm_pulse.so" >/dev/null; then
  echo "warning: ALSA's pulse plugin is missing, so PortAudio will not see this device;" \
       "install it with apt-get install libasound2-plugins" >&2
fi

has_sink() {
  pactl list short sinks 2>/dev/null | awk '{print $2}' | grep -qx "$SINK"
}

if pulseaudio --check 2>/dev/null; then
  if has_sink; then
    echo "PulseAudio is already running with the null sink $SINK; nothing to do"
  else
    pactl load-module module-null-sink sink_name="$SINK" \
      sink_properties=device.description="$SINK" >/dev/null
    echo "PulseAudio was already running; added the null sink $SINK and left the defaults" \
         "alone (use it with PULSE_SINK=$SINK PULSE_SOURCE=$SINK.monitor)"
  fi
  exit 0
fi

# Only the modules needed: no hardware detection (there is none) and no suspend-on-idle, which
# would stop the monitor from delivering frames while nothing plays.
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
cat >"$workdir/null.pa" <<EOF
load-module module-native-protocol-unix
load-module module-null-sink sink_name=$SINK rate=48000 sink_properties=device.description=$SINK
set-default-sink $SINK
set-default-source $SINK.monitor
EOF

# As root PulseAudio warns that it is meant for users; a per-user daemon still works, and a
# system-wide one (--system) would need the pulse-access group for every client.
# The daemon gets no handle on our stdout/stderr: a caller reading them would never see EOF.
if ! pulseaudio --daemonize=yes -n -F "$workdir/null.pa" --exit-idle-time=-1 \
    --log-target=stderr </dev/null >/dev/null 2>"$workdir/log"; then
  grep -v "not intended to be run as root" "$workdir/log" >&2 || true
  echo "error: PulseAudio did not start (its log is above)" >&2
  exit 1
fi

for _ in $(seq 50); do
  has_sink && break
  sleep 0.1
done
if ! has_sink; then
  echo "error: PulseAudio started but the null sink $SINK did not appear" >&2
  exit 1
fi
echo "started PulseAudio (pid $(pgrep -u "$(id -u)" -x pulseaudio | head -n1)) with the null" \
     "sink $SINK as the default speaker and $SINK.monitor as the default microphone"
