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

The configuration comes from the ``--config-file`` (and ``--config-dir``)
arguments a server gives the application, as uWSGI's ``pyargv`` does,
else from the file ``CYBORG_CONFIG_FILE`` names, else from the usual
places (``/etc/cyborg/cyborg.conf``). The API may be mounted under a path
prefix such as ``/accelerator``: its links follow the request's
``SCRIPT_NAME``.
"""

import sys

from cyborg.api import app
from cyborg import startup


def init_application():
    startup.prepare_wsgi_api(getattr(sys, 'argv', []))
    return app.setup_app(open_database=startup.open_database)


application = init_application()
