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

"""Options of the [DEFAULT] group: host identity, state and timers."""

import socket

from oslo_config import cfg

from cyborg.conf import ignored

default_opts = [
    cfg.StrOpt(
        'host',
        default=socket.gethostname(),
        sample_default='<hostname>',
        help="""
Name of this host, for the services that run on it.

A conductor or API service serves RPC under it. The agent tries it as the
name of the host's compute node resource provider in Placement when
Placement has no provider named after ``[agent] resource_provider_name``
(by default the fully qualified domain name of the host); the name it
finds is the host's name in Cyborg, which the devices of the host are
recorded under and the agent serves RPC under. Keep the value
openstack-cyborg had on the host.

Related options:

* ``[agent] resource_provider_name``
"""),
    cfg.StrOpt(
        'state_path',
        default='/var/lib/cyborg',
        help="""
Top-level directory for Cyborg's local state.

Other options refer to it as ``$state_path``; the default SQLite database
(``[database] connection``) lives here. The directory must exist and be
writable by the user the services run as. Point it somewhere else for a
development or test deployment that does not run as a system service.
"""),
    cfg.IntOpt(
        'bind_timeout',
        default=300,
        min=1,
        help="""
Seconds a background accelerator request (ARQ) bind may take.

A bind that has not finished within this time (for example because FPGA
programming hangs or an agent stopped answering) is abandoned: the ARQ goes
to ``BindFailed`` and Nova is told, so the instance build fails instead of
waiting forever. Raise it when devices legitimately need longer to program;
it should be at least ``[fpga] program_timeout`` plus the time to download
the bitstream. Nova waits for the bind result for ``[DEFAULT]
arq_binding_timeout`` seconds of nova.conf (also 300 by default); keep this
value no longer than Nova's, or Nova gives up on the instance before Cyborg
reports the failure.

Related options:

* ``[fpga] program_timeout``
"""),
    cfg.IntOpt(
        'periodic_interval',
        default=60,
        min=1,
        help="""
Seconds between runs of the conductor's periodic tasks.

The periodic tasks find and fail accelerator requests whose bind outlived
``bind_timeout``, resume work a stopped conductor left behind, and start
Placement reconciliation when ``[conductor] reconcile_interval`` has passed.
A lower value notices stuck work sooner at the cost of more database
queries.

Related options:

* ``bind_timeout``
* ``periodic_fuzzy_delay``
* ``[conductor] reconcile_interval``
"""),
    cfg.IntOpt(
        'periodic_fuzzy_delay',
        default=5,
        min=0,
        help="""
Largest random delay, in seconds, before the first periodic task run.

Each service waits a random time between zero and this value before it
starts its periodic tasks, so that many services started together do not
hit the database and Placement at the same moment. Set to 0 to start at
once.

Related options:

* ``periodic_interval``
"""),
    cfg.IntOpt(
        'thread_pool_size',
        default=16,
        min=1,
        help="""
Threads each conductor process binds accelerator requests (ARQs) with.

Binds run in the background, one thread per ARQ, and may wait for FPGA
programming and for agents. Raise it when many instances with
accelerators are booted at once and binds queue behind each other; each
thread may hold a database connection, so keep it within ``[database]
max_pool_size`` plus ``max_overflow``.

Related options:

* ``bind_timeout``
"""),
    ignored.option(
        cfg.StrOpt, 'pybasedir',
        'Cyborg finds its own files; install paths need no setting.'),
    ignored.option(
        cfg.StrOpt, 'bindir',
        'Cyborg runs no helper programs from a directory of its own.'),
    ignored.option(
        cfg.BoolOpt, 'fatal_exception_format_errors',
        'an error message that cannot be formatted keeps its template.'),
]


def register_opts(conf):
    conf.register_opts(default_opts)


def list_opts():
    return {'DEFAULT': default_opts}
