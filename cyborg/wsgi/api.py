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
"""``cyborg.wsgi.api:application``: the API for a WSGI server.

The configuration comes from the usual places (``/etc/cyborg/cyborg.conf``
and ``--config-dir`` defaults); ``CYBORG_CONFIG_FILE`` names another file.
The API may be mounted under a path prefix such as ``/accelerator``: its
links follow the request's ``SCRIPT_NAME``.
"""

import os

from cyborg.api import app
import cyborg.conf
from cyborg import startup

CONF = cyborg.conf.CONF


def init_application():
    config_file = os.environ.get('CYBORG_CONFIG_FILE')
    startup.prepare_server(
        'cyborg-api', ['cyborg-api'],
        default_config_files=[config_file] if config_file else None)
    startup.connect_api(CONF)
    return app.setup_app()


application = init_application()
