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
"""``cyborg-conductor``: the service that owns the database and Placement.

One worker (the default) runs in the command's own process; more run
under oslo.service's master process, forked from it once it has imported
what they run (see :func:`cyborg.common.service.freeze`).
"""

from oslo_service import service

from cyborg.common import service as cyborg_service
from cyborg.conductor import service as conductor_service
import cyborg.conf
from cyborg import startup

CONF = cyborg.conf.CONF


def main(argv=None):
    startup.prepare_server('cyborg-conductor', argv)
    conductor = conductor_service.ConductorService()
    if CONF.conductor.workers == 1:
        return cyborg_service.run(conductor, CONF)
    launcher = service.launch(CONF, conductor, workers=CONF.conductor.workers,
                              restart_method='mutate')
    cyborg_service.freeze()
    return launcher.wait()
