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
"""Many simulated hosts reporting to real conductors, for load and scale.

One agent process per host is too heavy for a test machine, so the
hosts' agents are played by this module: the real drivers discover one
simulated host (a sysfs tree of :mod:`cyborg.tests.sysfs`), and each host
sends that report under its own name over the conductor's RPC API, after
asking for its compute node provider, as ``cyborg-agent`` does at start.
The conductors, the database and Placement see what agents would send.
"""

import concurrent.futures
import time

from cyborg.agent import resource_tracker
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg import context as cyborg_context
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.tests import sysfs

CONF = cyborg.conf.CONF

#: Seconds a simulated agent waits before it reports again a report that
#: found its host busy (a real agent waits ``[agent] report_interval``).
RETRY_INTERVAL = 0.5


def fpga_host_report(root, fpgas, vfs):
    """The Intel FPGA driver's report of a host with ``fpgas`` cards.

    Each card has ``vfs`` virtual functions: one deployable offering
    ``vfs`` accelerators, one attach handle per VF. The tree is written
    under ``root``; ``[agent] sysfs_root`` is set to it.
    """
    sysfs.build(root, [('intel_fpga', '0000:%02x:00.0' % (0x10 + i),
                        {'vfs': vfs}) for i in range(fpgas)])
    CONF.set_override('sysfs_root', root, group='agent')
    tracker = resource_tracker.ResourceTracker(
        'template', drivers_base.load(['intel_fpga_driver']), None)
    return tracker.discover()


def write_conf(path, sections):
    """Write a configuration file of {section: {option: value}}."""
    with open(path, 'w') as f:
        for section, options in sections.items():
            f.write('[%s]\n' % section)
            for key, value in options.items():
                f.write('%s = %s\n' % (key, value))
    return path


def conductor_ready(timeout=120):
    """Wait until a conductor answers RPC calls on the transport."""
    api = rpcapi.ConductorAPI()
    ctx = cyborg_context.get_admin_context()
    deadline = time.monotonic() + timeout
    while True:
        try:
            # Any answer, an error included, proves a conductor serves.
            api.compute_node_rp(ctx, 'no-such-host', 'no-such-host',
                                timeout=2)
        except exception.ResourceProviderNotFound:
            return
        except exception.ServiceUnavailable:
            if time.monotonic() > deadline:
                raise
            continue


def report(template, hosts, threads=None, resend=False):
    """Each host reports ``template`` under its own name, all at once.

    Unless ``resend``, a host first asks for its compute node provider,
    as an agent does at start (Placement must know it). A call that no
    conductor answered (one died with it, or all were busy past the RPC
    timeout), or a report that finds its host's lease held, is sent
    again.

    :returns: the seconds until every report was answered.
    """
    api = rpcapi.ConductorAPI()
    ctx = cyborg_context.get_admin_context()

    def agent(host):
        if not resend:
            _until_answered(api.compute_node_rp, ctx, host, host)
        host_report = template.obj_clone()
        host_report.hostname = host
        return _until_answered(api.report_host, ctx, host_report)

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(
            threads or min(len(hosts), 64)) as pool:
        list(pool.map(agent, hosts))
    return time.monotonic() - start


def _until_answered(call, *args):
    """``call(*args)``, again after each unanswered try, as an agent would.

    The agent's next pass (``[agent] report_interval``) is
    :data:`RETRY_INTERVAL` here. A lease held means a conductor's periodic
    pass is syncing the host.
    """
    while True:
        try:
            return call(*args)
        except (exception.HostLeaseHeld, exception.ServiceUnavailable):
            time.sleep(RETRY_INTERVAL)
