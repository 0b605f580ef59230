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
"""Running an FPGA vendor's programming tool: the root part.

The entrypoint runs in the ``[privsep_vendor_tool]`` daemon. The caller
does not give a command line: it names a tool of :data:`TOOLS`, the
device's PCI address, the bitstream file and the partition, and the
daemon checks each (a PCI address, a file inside its own ``[glance]
download_dir``, a partition the tool has) and builds the arguments
itself. The tool runs by the absolute path of its own ``[fpga]
<tool>_path`` option, never through ``PATH``. So a caller that took over
the agent can load a downloaded bitstream into a device, which is the
agent's job anyway, and nothing else as root.
"""

import os
import signal
# This module exists to run the configured vendor tools.
import subprocess  # nosec B404

from cyborg.common import pci_address
import cyborg.conf
import cyborg.privsep

CONF = cyborg.conf.CONF

#: How much of the tool's error output comes back.
STDERR_TAIL = 500

#: XRT's partitions: the user region, and the shell (persistent flash).
USER, SHELL = 'user', 'shell'


def _fpgaconf(path, device, bitstream, partition):
    if partition is not None:
        raise ValueError('fpgaconf loads the user region only; no '
                         'partition is given')
    parts = pci_address.parse(device)
    return [path, '-S', '0x' + parts['domain'], '-B', '0x' + parts['bus'],
            '-D', '0x' + parts['device'], '-F', '0x' + parts['function'],
            bitstream]


def _xbmgmt(path, device, bitstream, partition):
    if partition not in (USER, SHELL):
        raise ValueError('xbmgmt partition %r is neither %r nor %r'
                         % (partition, USER, SHELL))
    # --force answers xbmgmt's confirmation prompt.
    return [path, 'program', '--device', device, '--' + partition,
            bitstream, '--force']


#: Tool name -> builder of its argument list; the tool's path is the
#: ``[fpga] <name>_path`` option.
TOOLS = {'fpgaconf': _fpgaconf, 'xbmgmt': _xbmgmt}


def tool_path(tool):
    """The absolute path of ``tool`` as its ``[fpga]`` option gives it.

    :raises ValueError: no such tool, or the option is not absolute.
    """
    if tool not in TOOLS:
        raise ValueError('%r is not a vendor tool (%s)'
                         % (tool, ', '.join(sorted(TOOLS))))
    path = getattr(CONF.fpga, tool + '_path')
    if not path or not os.path.isabs(path):
        raise ValueError('[fpga] %s_path %r is not an absolute path'
                         % (tool, path))
    return path


def download_dir():
    """The directory bitstreams are downloaded to, as the agent's."""
    return os.path.realpath(CONF.glance.download_dir)


def argv(tool, device, bitstream, partition=None):
    """The command line that loads ``bitstream`` into ``device``.

    :raises ValueError: an argument is not what the tool may take.
    """
    path = tool_path(tool)
    pci_address.parse(device)
    if not isinstance(bitstream, str) or not os.path.isabs(bitstream):
        raise ValueError('bitstream %r is not an absolute path'
                         % (bitstream,))
    real = os.path.realpath(bitstream)
    if os.path.dirname(real) != download_dir():
        raise ValueError('bitstream %s is not a file of the download '
                         'directory %s' % (bitstream, download_dir()))
    return TOOLS[tool](path, device, real, partition)


@cyborg.privsep.vendor_tool_pctxt.entrypoint
def run(tool, device, bitstream, partition, timeout):
    """Load ``bitstream`` into ``device`` with ``tool`` within ``timeout``.

    The daemon checks the arguments and builds the command line (see
    :func:`argv`). A tool that runs too long is killed with everything it
    started.

    :returns: (exit status, the end of its standard error); the status is
        None when the tool was killed for running too long.
    :raises ValueError: an argument is refused.
    :raises OSError: the tool cannot be run.
    """
    command = argv(tool, device, bitstream, partition)
    # A session of its own, so that a kill reaches its children too. The
    # program is the absolute path an [fpga] option names, the arguments
    # were checked above.
    with subprocess.Popen(  # nosec B603
            command, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True) as proc:
        try:
            _out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None, ''
    return proc.returncode, err.decode(errors='replace')[-STDERR_TAIL:]
