# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Simulated guests of Nova's fake virt driver, to log in to over SSH.

This file runs in Nova's own virtualenv (paramiko comes with Nova), by
path, beside :mod:`cyborg_quickstart.nova_venv.nova_runner`, whose
``RecordingDriver`` gives each server with a fixed IPv4 address a guest through
:class:`Guests`. A guest is a process, ``python nova_guest.py DIR``
(:func:`boot`), much as a virtual machine is a QEMU process:

* an SSH server (paramiko) on port 22 of each of the server's fixed IPv4
  addresses, which the demo network has on loopback; it lets in
  :data:`USER`, the image's user, with the public key of the server's
  keypair (Nova's ``key_data``, which a real guest gets from the metadata
  service);
* each command runs in ``/bin/bash`` (Tempest's prologue sets
  ``pipefail``, which CirrOS's shell has and dash has not), with no
  input, its ``PATH`` starting with the guest's own commands:
  ``lspci`` lists the PCI functions passed through to it (the devices of
  the server's PCI accelerator requests, with the vendor, device and
  class ids the host's sysfs shows for them), ``sudo`` runs its command,
  ``reboot`` drops the guest's sessions and makes it unreachable for
  :data:`REBOOT_SECONDS`;
* pausing the server stops the process (``SIGSTOP``), as a paused
  guest's vCPUs stop; powering it off kills it; the guest also ends when
  its standard input closes, so the guests end with nova-compute.

``DIR`` holds ``guest.json`` (what :class:`Guests` booted it with), the
commands in ``bin/``, the ``power`` FIFO ``reboot`` writes to and
``console.log``, the guest's own log.
"""

import json
import os
import selectors
import signal
import socket
# The guest runs the commands it is sent, as a real guest's shell does.
import subprocess  # nosec B404
import sys
import threading
import time

#: The user the guest lets in, CirrOS's (Tempest's
#: ``[validation] image_ssh_user``).
USER = 'cirros'
#: How long a guest that reboots stays unreachable: more than Tempest's
#: ``[compute] build_interval``, which its reboot test polls with.
REBOOT_SECONDS = 2
SSH_PORT = 22
#: The guest's commands: ``lspci`` (``lspci -n`` prints the same),
#: ``sudo``, ``reboot``.
_COMMANDS = {
    'lspci': '#!/bin/sh\ncat <<"EOF"\n%(devices)sEOF\n',
    'sudo': '#!/bin/sh\nexec "$@"\n',
    'reboot': '#!/bin/sh\necho reboot > %(power)s\n',
}


class GuestError(Exception):
    """A guest did not boot; the message says where its log is."""


def device_ids(sysfs, arq):
    """The ids of the PCI function of ``arq``, as the host shows them."""
    address = '%(domain)s:%(bus)s:%(device)s.%(function)s' % arq[
        'attach_handle_info']
    ids = {}
    for name in ('vendor', 'device', 'class'):
        with open(os.path.join(sysfs, 'bus', 'pci', 'devices', address,
                               name)) as f:
            ids[name] = f.read().strip().lower().removeprefix('0x')
    return ids


class Guests:
    """The guests of one nova-compute, by server uuid.

    :param root: where each server's guest has its directory (Nova's
        ``instances_path``).
    :param sysfs: the host's sysfs, where the ids of the PCI functions
        passed through are read.
    """

    def __init__(self, root, sysfs):
        self.root = root
        self.sysfs = sysfs
        self._lock = threading.Lock()
        self._running = {}

    def _path(self, uuid, *parts):
        return os.path.join(self.root, uuid, 'guest', *parts)

    def start(self, instance, network_info=None, accel_info=None):
        """Boot the guest of ``instance`` unless it runs or has no address.

        :param network_info: the server's VIFs; None keeps its addresses
            of the last boot.
        :param accel_info: the server's accelerator requests, as Nova
            passes them to the driver; None keeps the devices of the last
            boot. The server's keypair is its ``key_data``, or that of
            the last boot.
        :raises GuestError: if it does not boot.
        """
        uuid = instance.uuid
        with self._lock:
            if uuid in self._running:
                return
            try:
                with open(self._path(uuid, 'guest.json')) as f:
                    conf = json.load(f)
            except FileNotFoundError:
                conf = {'addresses': [], 'devices': [], 'key': ''}
            # "ssh-rsa AAAA... comment": the key without its comment. Nova
            # passes none to an unshelved server, whose disk keeps it.
            if instance.key_data:
                conf['key'] = ' '.join(instance.key_data.split()[:2])
            if network_info is not None:
                conf['addresses'] = [
                    ip['address'] for vif in network_info
                    for ip in vif.fixed_ips() if ip['version'] == 4]
            if not conf['addresses']:
                return
            if accel_info is not None:
                conf['devices'] = [
                    device_ids(self.sysfs, arq) for arq in accel_info
                    if arq.get('attach_handle_type') == 'PCI']
            os.makedirs(self._path(uuid), exist_ok=True)
            with open(self._path(uuid, 'guest.json'), 'w') as f:
                json.dump(conf, f)
            with open(self._path(uuid, 'console.log'), 'a') as log:
                # The guest, this file run by Nova's python.
                proc = subprocess.Popen(  # nosec B603
                    [sys.executable, os.path.abspath(__file__),
                     self._path(uuid)], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=log)
            # It says when it listens, or exits.
            if not proc.stdout.readline():
                proc.wait()
                raise GuestError('the guest of server %s did not boot; see '
                                 '%s' % (uuid, self._path(uuid,
                                                          'console.log')))
            self._running[uuid] = proc

    def stop(self, uuid):
        """Power the guest of server ``uuid`` off, if it runs."""
        with self._lock:
            proc = self._running.pop(uuid, None)
        if proc is not None:
            proc.kill()
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()

    def signal(self, uuid, signum):
        """Send ``signum`` to the guest of server ``uuid``, if it runs."""
        with self._lock:
            proc = self._running.get(uuid)
            if proc is not None:
                proc.send_signal(signum)

    def pause(self, uuid):
        self.signal(uuid, signal.SIGSTOP)

    def unpause(self, uuid):
        self.signal(uuid, signal.SIGCONT)


# --- the guest ---------------------------------------------------------


def lspci_line(slot, ids):
    """What ``lspci -n`` prints of the function ``ids`` in ``slot``.

    As ``00:05.0 1200: 10ee:5021``: the class without its programming
    interface.
    """
    return '00:%02x.0 %s: %s:%s\n' % (slot, ids['class'][:4], ids['vendor'],
                                      ids['device'])


def _session_class():
    import paramiko

    class Session(paramiko.ServerInterface):
        """One SSH connection to the guest: public key, then commands."""

        def __init__(self, key, env):
            self.key = key
            self.env = env

        def get_allowed_auths(self, username):
            return 'publickey'

        def check_auth_publickey(self, username, key):
            if username == USER and self.key == '%s %s' % (
                    key.get_name(), key.get_base64()):
                return paramiko.AUTH_SUCCESSFUL
            return paramiko.AUTH_FAILED

        def check_channel_request(self, kind, chanid):
            if kind == 'session':
                return paramiko.OPEN_SUCCEEDED
            return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

        def check_channel_exec_request(self, channel, command):
            threading.Thread(target=self.run, args=(channel, command),
                             daemon=True).start()
            return True

        def run(self, channel, command):
            # The command the client sent, in the guest's shell.
            done = subprocess.run(  # nosec B603
                ['/bin/bash', '-c', command], stdin=subprocess.DEVNULL,
                capture_output=True, env=self.env, cwd=self.env['HOME'])
            try:
                channel.sendall(done.stdout)
                channel.sendall_stderr(done.stderr)
                channel.send_exit_status(done.returncode)
                # End of file; the client closes the channel. paramiko
                # answers the exec request once check_channel_exec_request
                # has returned, which may be after this thread is done,
                # and a client that sees the channel closed before that
                # answer fails the command ("Channel closed.").
                channel.shutdown_write()
            except (OSError, EOFError, paramiko.SSHException) as e:
                # The guest rebooted under the session.
                print('session ended: %s' % e, file=sys.stderr, flush=True)

    return Session


def _listen(addresses):
    """Sockets listening on port 22 of those ``addresses`` that are free.

    An address where the guest cannot listen (not this host's, or its
    port taken) leaves it unreachable there, as a guest whose network
    does not come up is; its log says why.
    """
    listeners = []
    for address in addresses:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, SSH_PORT))
        except OSError as e:
            sock.close()
            print('cannot listen on %s port %d: %s' % (address, SSH_PORT, e),
                  file=sys.stderr, flush=True)
            continue
        sock.listen(16)
        listeners.append(sock)
    return listeners


def boot(path):
    """Run the guest whose directory is ``path`` until its input closes."""
    import paramiko

    with open(os.path.join(path, 'guest.json')) as f:
        conf = json.load(f)
    power = os.path.join(path, 'power')
    if not os.path.exists(power):
        os.mkfifo(power)
    bin_dir = os.path.join(path, 'bin')
    os.makedirs(bin_dir, exist_ok=True)
    devices = ''.join(lspci_line(5 + slot, ids)
                      for slot, ids in enumerate(conf['devices']))
    for name, text in _COMMANDS.items():
        with open(os.path.join(bin_dir, name), 'w') as f:
            f.write(text % {'devices': devices, 'power': power})
        os.chmod(os.path.join(bin_dir, name), 0o700)
    env = {'PATH': bin_dir + ':/usr/sbin:/usr/bin:/sbin:/bin',
           'HOME': path, 'USER': USER, 'LANG': 'C'}
    host_key = paramiko.ECDSAKey.generate()
    session = _session_class()
    # Read and write, so that it never reads end-of-file.
    power_fd = os.open(power, os.O_RDWR | os.O_NONBLOCK)
    selector = selectors.DefaultSelector()
    selector.register(sys.stdin, selectors.EVENT_READ)
    selector.register(power_fd, selectors.EVENT_READ)
    listeners = _listen(conf['addresses'])
    # Booted: Guests.start waits for this line.
    print('booted', flush=True)
    for sock in listeners:
        selector.register(sock, selectors.EVENT_READ)
    transports = []
    while True:
        for key, _ in selector.select():
            if key.fileobj is sys.stdin:
                return
            if key.fileobj is power_fd:
                os.read(power_fd, 4096)
                print('rebooting', file=sys.stderr, flush=True)
                for sock in listeners:
                    selector.unregister(sock)
                    sock.close()
                for transport in transports:
                    transport.close()
                transports = []
                # The guest boots again.
                time.sleep(REBOOT_SECONDS)
                listeners = _listen(conf['addresses'])
                for sock in listeners:
                    selector.register(sock, selectors.EVENT_READ)
                break
            conn, _ = key.fileobj.accept()
            transport = paramiko.Transport(conn)
            transport.add_server_key(host_key)
            transport.start_server(threading.Event(), session(conf['key'],
                                                              env))
            transports = [t for t in transports if t.is_active()]
            transports.append(transport)


if __name__ == '__main__':
    boot(sys.argv[1])
