# >>> sitewarden guard >>> added by `sitewarden install --hook sitecustomize`; `sitewarden uninstall` removes it
try:
    import os as _sitewarden_os
    if _sitewarden_os.environ.get('SITEWARDEN_DISABLE', '').strip().lower() not in ('1', 'y', 'yes', 't', 'true', 'on'):
        __import__('sitewarden._startup')._startup.activate()
    del _sitewarden_os
except Exception:
    pass
# <<< sitewarden guard <<<
